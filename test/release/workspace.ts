// The workspace's packages as pnpm sees them (the folders pnpm-workspace.yaml lists), with their
// manifests: what the release tests publish, version and compare.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly exports?: Readonly<Record<string, unknown>>;
  readonly engines?: { readonly node?: string };
}

export interface WorkspacePackage {
  /** Its folder relative to the workspace root, e.g. `packages/core`. */
  readonly dir: string;
  readonly manifest: Manifest;
}

export const repoRoot = join(import.meta.dirname, '..', '..');

export const dependencyFields = [
  'dependencies',
  'devDependencies',
  'peerDependencies',
  'optionalDependencies',
] as const;
export type DependencyField = (typeof dependencyFields)[number];

/** The patterns of pnpm-workspace.yaml's `packages:` list, e.g. `packages/*` and `bench`. */
function workspacePatterns(root: string): string[] {
  const yaml = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const list = /^packages:\n((?:[ \t]+-[^\n]*\n?)+)/m.exec(yaml)?.[1];
  if (list === undefined) throw new Error(`${root}/pnpm-workspace.yaml has no packages: list`);
  return [...list.matchAll(/-\s*['"]?([^'"\n]+?)['"]?\s*$/gm)].map((match) => match[1] ?? '');
}

/** Every package of the workspace at `root` (only `dir` and `dir/*` patterns, the ones we use). */
export function workspacePackages(root = repoRoot): WorkspacePackage[] {
  const dirs = workspacePatterns(root).flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [pattern];
    const parent = pattern.slice(0, -2);
    return readdirSync(join(root, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${parent}/${entry.name}`);
  });
  return dirs
    .filter((dir) => existsSync(join(root, dir, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest }));
}

export const isPublished = ({ manifest }: WorkspacePackage): boolean => manifest.private !== true;

/** A manifest's dependencies on our own packages, in every dependency field, as [field, name, range]. */
export function internalDependencies(manifest: Manifest): [field: DependencyField, name: string, range: string][] {
  return dependencyFields.flatMap((field) =>
    Object.entries(manifest[field] ?? {})
      .filter(([name]) => name.startsWith('@openmanus/'))
      .map(([name, range]): [DependencyField, string, string] => [field, name, range]),
  );
}
