// A release dry run: `changeset version` on a copy of the workspace's manifests, changelogs and
// pending changesets (the checkout itself is never touched) gives every published package the one
// version of the fixed group, writes each one's CHANGELOG.md with the changesets' text, leaves the
// private packages alone, and keeps our internal ranges ones pnpm publishes as the new version.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  internalDependencies,
  isPublished,
  type Manifest,
  repoRoot,
  type WorkspacePackage,
  workspacePackages,
} from './workspace.js';

const exec = promisify(execFile);
const changesetBin = join(
  dirname(createRequire(join(repoRoot, 'package.json')).resolve('@changesets/cli/package.json')),
  'bin.js',
);

type Bump = 'major' | 'minor' | 'patch';
const bumps: readonly Bump[] = ['patch', 'minor', 'major'];

interface Changeset {
  readonly file: string;
  readonly releases: Readonly<Record<string, Bump>>;
  readonly summary: string;
}

function parseChangeset(file: string, text: string): Changeset {
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!match) throw new Error(`${file} is not a changeset (front matter, then a summary)`);
  const releases = [...(match[1] ?? '').matchAll(/^\s*['"]?([^'":\s]+)['"]?\s*:\s*(major|minor|patch)\s*$/gm)];
  return {
    file,
    releases: Object.fromEntries(releases.map((release) => [release[1], release[2] as Bump])),
    summary: (match[2] ?? '').trim(),
  };
}

async function changesetsIn(dir: string): Promise<Changeset[]> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.md') && file !== 'README.md');
  return Promise.all(files.map(async (file) => parseChangeset(file, await readFile(join(dir, file), 'utf8'))));
}

const increment = (version: string, bump: Bump): string => {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
  if (bump === 'major') return `${major + 1}.0.0`;
  if (bump === 'minor') return `${major}.${minor + 1}.0`;
  return `${major}.${minor}.${patch + 1}`;
};

const newer = (a: string, b: string): boolean => {
  const [x, y] = [a, b].map((version) => version.split('.').map(Number));
  const at = x?.findIndex((part, i) => part !== y?.[i]) ?? -1;
  return at !== -1 && (x?.[at] ?? 0) > (y?.[at] ?? 0);
};

/** The checkout's files the dry run reads (tracked or new, never ignored), by path from the root. */
async function releaseFiles(): Promise<string[]> {
  const { stdout } = await exec(
    'git',
    [
      'ls-files',
      '--cached',
      '--others',
      '--exclude-standard',
      '-z',
      '--',
      ':(glob)**/package.json',
      ':(glob)**/CHANGELOG.md',
      'pnpm-workspace.yaml',
      '.changeset',
    ],
    { cwd: repoRoot },
  );
  return stdout.split('\0').filter((path) => path !== '' && existsSync(join(repoRoot, path)));
}

// A change of the dry run's own (core alone, a patch), so that it has something to release even
// when nothing is pending, and shows that the fixed group takes every published package along.
const ownChangeset = {
  file: 'dry-run.md',
  text: "---\n'@openmanus/core': patch\n---\n\nThe dry run's change to core.\n",
};

let copy: string;
let before: WorkspacePackage[];
let after: WorkspacePackage[];
let pending: Changeset[];
let checkoutBefore: Record<string, string>;

const snapshot = async (root: string, paths: readonly string[]) =>
  Object.fromEntries(await Promise.all(paths.map(async (path) => [path, await readFile(join(root, path), 'utf8')])));

beforeAll(async () => {
  const paths = await releaseFiles();
  checkoutBefore = await snapshot(repoRoot, paths);
  copy = await mkdtemp(join(tmpdir(), 'openmanus-changesets-'));
  for (const path of paths) await cp(join(repoRoot, path), join(copy, path));
  pending = await changesetsIn(join(copy, '.changeset'));
  await writeFile(join(copy, '.changeset', ownChangeset.file), ownChangeset.text);
  before = workspacePackages(copy);
  await exec(process.execPath, [changesetBin, 'version'], { cwd: copy, timeout: 120_000, killSignal: 'SIGKILL' });
  after = workspacePackages(copy);
});

afterAll(async () => {
  if (copy) await rm(copy, { recursive: true, force: true });
});

const published = () => before.filter(isPublished);
const afterOf = (dir: string) => after.find((pkg) => pkg.dir === dir);
const versionAfter = (name: string) => after.find(({ manifest }) => manifest.name === name)?.manifest.version;

/** The manifest pnpm publishes for the copy's package in `dir`: packed, with our packages linked in as an install would. */
async function packedManifest(dir: string, manifest: Manifest): Promise<Manifest> {
  for (const [, name] of internalDependencies(manifest)) {
    const target = after.find((pkg) => pkg.manifest.name === name)?.dir;
    if (target === undefined) throw new Error(`${dir} depends on ${name}, which is not in the workspace`);
    const link = join(copy, dir, 'node_modules', name);
    await mkdir(dirname(link), { recursive: true });
    if (!existsSync(link)) await symlink(join(copy, target), link);
  }
  const destination = await mkdtemp(join(copy, '.packed-'));
  const { stdout } = await exec('pnpm', ['pack', '--json', '--pack-destination', destination], {
    cwd: join(copy, dir),
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  const { filename } = JSON.parse(stdout) as { filename: string };
  const packed = await exec('tar', ['-xOzf', filename, 'package/package.json'], { timeout: 60_000 });
  return JSON.parse(packed.stdout) as Manifest;
}

describe('a changesets release dry run', () => {
  it('reads the checkout only', async () => {
    expect(await snapshot(repoRoot, Object.keys(checkoutBefore))).toEqual(checkoutBefore);
  });

  it('gives every published package the fixed group’s next version, and the private ones none', () => {
    const all = [...pending, parseChangeset(ownChangeset.file, ownChangeset.text)];
    const highest = bumps.findLast((bump) => all.some((changeset) => Object.values(changeset.releases).includes(bump)));
    const current = published()
      .map(({ manifest }) => manifest.version)
      .reduce((a, b) => (newer(b, a) ? b : a));
    const next = increment(current, highest ?? 'patch');
    expect(published().length).toBeGreaterThan(1);
    for (const { dir, manifest } of before) {
      const version = afterOf(dir)?.manifest.version;
      expect(version, dir).toBe(isPublished({ dir, manifest }) ? next : manifest.version);
    }
  });

  it("writes each published package's CHANGELOG.md with the text of the changesets that name it", async () => {
    for (const { dir, manifest } of published()) {
      const changelog = await readFile(join(copy, dir, 'CHANGELOG.md'), 'utf8');
      expect(changelog.startsWith(`# ${manifest.name}\n\n## ${afterOf(dir)?.manifest.version}\n`), dir).toBe(true);
      for (const changeset of pending.filter(({ releases }) => manifest.name in releases)) {
        expect(changelog, `${dir}: ${changeset.file}`).toContain(`- ${changeset.summary.split('\n')[0]}`);
      }
    }
    const core = published().find(({ manifest }) => manifest.name === '@openmanus/core');
    expect(await readFile(join(copy, core?.dir ?? 'packages/core', 'CHANGELOG.md'), 'utf8')).toContain(
      "- The dry run's change to core.",
    );
    for (const { dir } of before.filter((pkg) => !isPublished(pkg))) {
      expect(existsSync(join(copy, dir, 'CHANGELOG.md')), dir).toBe(false);
    }
  });

  it('uses up the changesets it released', async () => {
    expect(await changesetsIn(join(copy, '.changeset'))).toEqual([]);
    expect(existsSync(join(copy, '.changeset', 'config.json'))).toBe(true);
  });

  it('keeps internal ranges on the workspace protocol, which pnpm publishes as caret ranges of the new versions', async () => {
    const dependents = after.filter((pkg) => isPublished(pkg) && internalDependencies(pkg.manifest).length > 0);
    expect(dependents.length).toBeGreaterThan(0);
    for (const { dir, manifest } of dependents) {
      const packed = await packedManifest(dir, manifest);
      for (const [field, name, range] of internalDependencies(manifest)) {
        expect(range, `${dir} ${field} ${name}`).toBe('workspace:^');
        expect(packed[field]?.[name], `${dir} ${field} ${name}, packed`).toBe(`^${versionAfter(name)}`);
      }
    }
  });
});
