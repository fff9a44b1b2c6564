import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// What npm shows and a consumer's install needs of every package we publish: checked here so that a
// new package (or a field dropped from one) is caught before a release, not after it.

const root = fileURLToPath(new URL('../../../', import.meta.url));
const repository = 'https://github.com/openmanus-ts/openmanus-ts';

interface Manifest {
  readonly name?: string;
  readonly version?: string;
  readonly description?: string;
  readonly private?: boolean;
  readonly license?: string;
  readonly repository?: { readonly type?: string; readonly url?: string; readonly directory?: string };
  readonly homepage?: string;
  readonly bugs?: string;
  readonly engines?: { readonly node?: string };
  readonly files?: readonly string[];
  readonly bin?: unknown;
  readonly sideEffects?: boolean | readonly string[];
  readonly exports?: Readonly<
    Record<string, Readonly<Record<string, { readonly types?: string; readonly default?: string }>>>
  >;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
}

const directories = ['packages', 'examples'].flatMap((parent) =>
  readdirSync(join(root, parent), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, parent, entry.name, 'package.json')))
    .map((entry) => `${parent}/${entry.name}`),
);

const manifests = directories.map((directory) => ({
  directory,
  manifest: JSON.parse(readFileSync(join(root, directory, 'package.json'), 'utf8')) as Manifest,
}));

const published = manifests.filter(({ manifest }) => manifest.private !== true);

describe('package metadata', () => {
  it('finds the workspace packages, core and the CLI among those published', () => {
    expect(directories).toContain('packages/core');
    expect(published.map(({ manifest }) => manifest.name)).toEqual(
      expect.arrayContaining(['@openmanus/core', '@openmanus/cli']),
    );
    expect(existsSync(join(root, 'LICENSE'))).toBe(true);
  });

  it.each(manifests)('$directory has a README', ({ directory }) => {
    expect(existsSync(join(root, directory, 'README.md'))).toBe(true);
  });

  it.each(published)('$directory says what it is, whose it is and where it comes from', ({ directory, manifest }) => {
    expect(manifest.name).toMatch(/^@openmanus\/[a-z][a-z0-9-]*$/);
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(manifest.description?.length).toBeGreaterThan(0);
    expect(manifest.license).toBe('MIT');
    expect(existsSync(join(root, directory, 'LICENSE'))).toBe(true);
    expect(manifest.repository).toEqual({ type: 'git', url: `git+${repository}.git`, directory });
    expect(manifest.homepage).toBe(`${repository}/tree/main/${directory}#readme`);
    expect(manifest.bugs).toBe(`${repository}/issues`);
  });

  // 20.19 and 22.12 are the first of their majors that require() an ES module graph, which the
  // CommonJS entries do; a package needing what only 22 has (a dependency's engines) says >=22.12.0.
  const ranges = new Map(published.map(({ manifest }) => [manifest.name, manifest.engines?.node]));
  const oldest = (range = '') => {
    const [major = 0, minor = 0] = (range.match(/\d+\.\d+/)?.[0] ?? '').split('.').map(Number);
    return major * 1000 + minor;
  };
  it.each(published)('$directory says which Node it needs, no older than what it depends on', ({ manifest }) => {
    expect(manifest.engines?.node).toMatch(/^(\^20\.19\.0 \|\| >=22\.12\.0|>=22\.12\.0)$/);
    for (const name of Object.keys(manifest.dependencies ?? {}).filter((name) => ranges.has(name))) {
      expect(oldest(manifest.engines?.node), name).toBeGreaterThanOrEqual(oldest(ranges.get(name)));
    }
  });

  it.each(published)('$directory packs its build, licence and README, with types for every entry', ({ manifest }) => {
    expect(manifest.files).toEqual(expect.arrayContaining(['dist', 'LICENSE', 'README.md']));
    // A command (the CLI) is run, not imported: it has a bin and no entries.
    if (manifest.bin === undefined) expect(Object.keys(manifest.exports ?? {}).length).toBeGreaterThan(0);
    // What a bundler may drop when nothing of it is used: said by every package that has entries.
    if (manifest.exports !== undefined) expect(manifest.sideEffects).toBeDefined();
    for (const [entry, conditions] of Object.entries(manifest.exports ?? {})) {
      // ES modules import the build; CommonJS requires the same modules through dist/cjs (scripts/build-cjs.mjs).
      expect(Object.keys(conditions), entry).toEqual(['import', 'require']);
      expect(conditions.import?.types, `${entry}'s types`).toMatch(/^\.\/dist\/.*\.d\.ts$/);
      expect(conditions.import?.default, entry).toMatch(/^\.\/dist\/.*\.js$/);
      expect(conditions.require?.types, `${entry}'s CommonJS types`).toBe(
        conditions.import?.types?.replace('./dist/', './dist/cjs/'),
      );
      expect(conditions.require?.default, entry).toBe(conditions.import?.default?.replace('./dist/', './dist/cjs/'));
    }
  });

  it.each(published)('$directory depends on our other packages by caret range', ({ manifest }) => {
    const ours = [manifest.dependencies, manifest.devDependencies, manifest.peerDependencies].flatMap((field) =>
      Object.entries(field ?? {}).filter(([name]) => name.startsWith('@openmanus/')),
    );
    for (const [name, specifier] of ours) expect(specifier, name).toBe('workspace:^');
  });

  // A user's zod schemas meet ours (defineTool, createChatCompletion): one zod, the user's, for both.
  // 4.2 is the first with schema.toJSONSchema(), which defineTool calls.
  const zodPeers = published.filter(({ manifest }) => manifest.peerDependencies?.zod !== undefined);
  it.each(zodPeers)('$directory takes zod as a peer, in a range holding the zod its tests run with', ({ manifest }) => {
    expect(manifest.dependencies?.zod).toBeUndefined();
    const [, peerMajor, peerMinor] = manifest.peerDependencies?.zod?.match(/^\^(\d+)\.(\d+)\.0$/) ?? [];
    const [, testedMajor, testedMinor] = manifest.devDependencies?.zod?.match(/^(\d+)\.(\d+)\.\d+$/) ?? [];
    expect(peerMajor, 'a caret range').toBeDefined();
    expect(testedMajor, 'a pinned devDependency').toBe(peerMajor);
    expect(Number(testedMinor)).toBeGreaterThanOrEqual(Number(peerMinor));
  });
});
