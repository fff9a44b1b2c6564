// The public entry points the API reference documents: one sidebar group per package.
// OPENMANUS_DOCS_REFERENCE=off leaves the reference out (the link check's own test builds without it);
// OPENMANUS_REPO_ROOT says where the packages are when the site is built from a copy.
import { join } from 'node:path';

const packages = join(process.env.OPENMANUS_REPO_ROOT ?? join(import.meta.dirname, '..'), 'packages');
const wanted = process.env.OPENMANUS_DOCS_REFERENCE !== 'off';

export const referenceEntries = [
  { slug: 'core', label: '@openmanus/core', entries: ['src/index.ts', 'src/kernel/index.ts', 'src/testing/index.ts'] },
  { slug: 'tools', label: '@openmanus/tools', entries: ['src/index.ts'] },
  { slug: 'browser', label: '@openmanus/browser', entries: ['src/index.ts'] },
  { slug: 'mcp', label: '@openmanus/mcp', entries: ['src/index.ts'] },
  { slug: 'flow', label: '@openmanus/flow', entries: ['src/index.ts', 'src/kernel.ts'] },
  { slug: 'sandbox', label: '@openmanus/sandbox', entries: ['src/index.ts'] },
  { slug: 'durable', label: '@openmanus/durable', entries: ['src/index.ts'] },
  { slug: 'sqlite', label: '@openmanus/sqlite', entries: ['src/index.ts'] },
  { slug: 'tracing', label: '@openmanus/tracing', entries: ['src/index.ts'] },
  { slug: 'server', label: '@openmanus/server', entries: ['src/index.ts'] },
  { slug: 'a2a', label: '@openmanus/a2a', entries: ['src/index.ts'] },
]
  .filter(() => wanted)
  .map((entry) => ({
    ...entry,
    entryPoints: entry.entries.map((file) => join(packages, entry.slug, file)),
    tsconfig: join(packages, entry.slug, 'tsconfig.build.json'),
    readme: join(import.meta.dirname, 'reference', `${entry.slug}.md`),
  }));
