// Every package as it is published (the tarball `pnpm pack` makes, workspace ranges rewritten):
// publint finds nothing in its package.json and files, and Are the Types Wrong finds no problem in
// any way TypeScript resolves it (node10, node16 from CommonJS and from ES modules, bundler).
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LibraryPackage, libraryPackages } from './libraryPackages.js';
import { type Manifest, repoRoot } from './workspace.js';

const run = promisify(execFile);
let packDir: string;
const tarballs = new Map<string, Promise<string>>();

beforeAll(async () => {
  packDir = await mkdtemp(join(tmpdir(), 'packed-'));
});

afterAll(async () => {
  await rm(packDir, { recursive: true, force: true });
});

/** The package's tarball (packed once for both checks), as npm names it. */
function tarballOf({ name, dir }: LibraryPackage): Promise<string> {
  let packed = tarballs.get(name);
  if (packed === undefined) {
    packed = (async () => {
      await run('pnpm', ['pack', '--pack-destination', packDir], { cwd: dir, timeout: 120_000 });
      const { version } = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string };
      return join(packDir, `${name.replace('@', '').replace('/', '-')}-${version}.tgz`);
    })();
    tarballs.set(name, packed);
  }
  return packed;
}

it.each(libraryPackages)('publint finds nothing in $name', async (pkg) => {
  const data = await readFile(await tarballOf(pkg));
  const { messages, pkg: manifest } = await publint({
    pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) },
    level: 'suggestion',
  });
  expect(messages.map((message) => `${message.type}: ${formatMessage(message, manifest, { color: false })}`)).toEqual(
    [],
  );
});

interface AttwReport {
  readonly analysis: { readonly types: unknown; readonly problems: readonly Readonly<Record<string, unknown>>[] };
}

it.each(libraryPackages)('Are the Types Wrong finds no problem in $name', async (pkg) => {
  const attw = join(repoRoot, 'node_modules', '.bin', 'attw');
  // It exits 1 when it finds a problem, with the report on stdout all the same.
  const { stdout, stderr } = await run(attw, [await tarballOf(pkg), '--format', 'json'], { timeout: 120_000 }).catch(
    (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
  );
  if (!stdout.trim().startsWith('{')) throw new Error(`attw gave no report for ${pkg.name}: ${stderr}`);
  const { analysis } = JSON.parse(stdout) as AttwReport;
  expect(analysis.types, 'typed').toBeTruthy();
  expect(analysis.problems).toEqual([]);
});

// A user's zod schemas meet ours (tools' parameters, settings, plans): one zod in their project,
// the one they installed, so every package that imports zod takes it as a peer range.
it.each(libraryPackages)('$name takes zod as a peer range, never a copy of its own', async ({ dir }) => {
  const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Manifest;
  expect(manifest.dependencies?.zod, 'zod in dependencies').toBeUndefined();
  const sources = await readdir(join(dir, 'src'), { recursive: true });
  const importsZod = (
    await Promise.all(
      sources.filter((file) => file.endsWith('.ts')).map((file) => readFile(join(dir, 'src', file), 'utf8')),
    )
  ).some((source) => /from ['"]zod['"]/.test(source));
  if (importsZod) expect(manifest.peerDependencies?.zod).toMatch(/^\^4\.\d+\.\d+$/);
});
