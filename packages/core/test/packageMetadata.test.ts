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
  readonly exports?: Readonly<Record<string, { readonly types?: string }>>;
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
    expect(manifest.name).toMatch(/^@openmanus\/[a-z-]+$/);
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(manifest.description?.length).toBeGreaterThan(0);
    expect(manifest.license).toBe('MIT');
    expect(existsSync(join(root, directory, 'LICENSE'))).toBe(true);
    expect(manifest.repository).toEqual({ type: 'git', url: `git+${repository}.git`, directory });
    expect(manifest.homepage).toBe(`${repository}/tree/main/${directory}#readme`);
    expect(manifest.bugs).toBe(`${repository}/issues`);
    expect(manifest.engines?.node).toBe('>=22');
  });

  it.each(published)('$directory packs its build and licence, with types for every entry', ({ manifest }) => {
    expect(manifest.files).toEqual(expect.arrayContaining(['dist', 'LICENSE']));
    // A command (the CLI) is run, not imported: it has a bin and no entries.
    if (manifest.bin === undefined) expect(Object.keys(manifest.exports ?? {}).length).toBeGreaterThan(0);
    for (const [entry, conditions] of Object.entries(manifest.exports ?? {})) {
      expect(conditions.types, `${entry}'s types`).toMatch(/\.d\.ts$/);
    }
  });

  it.each(published)('$directory depends on our other packages by caret range', ({ manifest }) => {
    const ours = [manifest.dependencies, manifest.devDependencies, manifest.peerDependencies].flatMap((field) =>
      Object.entries(field ?? {}).filter(([name]) => name.startsWith('@openmanus/')),
    );
    for (const [name, specifier] of ours) expect(specifier, name).toBe('workspace:^');
  });
});
