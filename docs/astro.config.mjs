// The documentation site: Starlight (Astro). Why Starlight: its markdown pages are plain files the
// snippet check reads; starlight-links-validator fails the build on a broken link or anchor;
// starlight-typedoc renders the API reference from our sources at build time; Pagefind searches
// offline. Everything builds without a network.
import starlight from '@astrojs/starlight';
import { defineConfig } from 'astro/config';
import starlightLinksValidator from 'starlight-links-validator';
import { createStarlightTypeDocPlugin } from 'starlight-typedoc';
import { referenceEntries } from './reference.mjs';

const reference = referenceEntries.map((entry) => {
  const [plugin, sidebarGroup] = createStarlightTypeDocPlugin();
  return {
    entry,
    sidebarGroup,
    plugin: plugin({
      entryPoints: entry.entryPoints,
      tsconfig: entry.tsconfig,
      output: `reference/${entry.slug}`,
      sidebar: { label: entry.label, collapsed: true },
      typeDoc: {
        readme: entry.readme,
        excludePrivate: true,
        excludeInternal: true,
        gitRevision: 'main',
        disableSources: true,
      },
    }),
  };
});

export default defineConfig({
  site: 'https://openmanus-ts.dev',
  telemetry: false,
  integrations: [
    starlight({
      title: 'OpenManus-TS',
      description: 'OpenManus rebuilt in TypeScript: an embeddable agent library with a functional core',
      plugins: [starlightLinksValidator({ errorOnFallbackPages: false }), ...reference.map((r) => r.plugin)],
      sidebar: [
        { label: 'Getting started', items: [{ autogenerate: { directory: 'getting-started' } }] },
        { label: 'Concepts', items: [{ autogenerate: { directory: 'concepts' } }] },
        { label: 'Guides', items: [{ autogenerate: { directory: 'guides' } }] },
        { label: 'The CLI', items: [{ autogenerate: { directory: 'cli' } }] },
        { label: 'Security', items: [{ autogenerate: { directory: 'security' } }] },
        { label: 'Performance', items: [{ autogenerate: { directory: 'performance' } }] },
        { label: 'Migrating from OpenManus', items: [{ autogenerate: { directory: 'migrating' } }] },
        { label: 'Development', items: [{ autogenerate: { directory: 'development' } }] },
        {
          label: 'Reference',
          items: [{ label: 'Error codes', slug: 'reference/error-codes' }, ...reference.map((r) => r.sidebarGroup)],
        },
      ],
    }),
  ],
});
