// Every package we release (packages/* and the CLI) published to a local registry (Verdaccio on
// 127.0.0.1), then @openmanus/core and @openmanus/tools installed by name into two projects outside
// the repository, an ESM one and a CommonJS one, each TypeScript strict with skipLibCheck off: they
// type-check against the published types, then run a scripted agent with a tool of
// @openmanus/tools, and Manus's python_execute (the CommonJS one on Node 20 too, the oldest we
// support); and @openmanus/server mounted in an outside Fastify app. Needs the packages built
// (`pnpm test` builds).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRegistry, startLocalRegistry } from './localRegistry.js';
import { nodeOf, SUPPORTED_NODES } from './runtimes.js';
import { internalDependencies, isPublished, type Manifest, repoRoot, workspacePackages } from './workspace.js';

const exec = promisify(execFile);
const minutes = (n: number) => n * 60_000;

const packages = workspacePackages().filter(isPublished);
const versionOf = (name: string) => packages.find(({ manifest }) => manifest.name === name)?.manifest.version;
const rootManifest = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as Manifest;

let work: string;
let registry: LocalRegistry | undefined;

/** Runs a command to its end (bounded by `timeout`), resolving with its exit code and output instead of throwing. */
async function attempt(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number },
) {
  try {
    const { stdout, stderr } = await exec(file, args, {
      ...options,
      killSignal: 'SIGKILL',
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string; signal?: string };
    return { code: failed.code ?? failed.signal ?? 'failed', stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** Like `attempt`, but a failure throws with the command's output. */
async function succeed(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number },
) {
  const result = await attempt(file, args, options);
  if (result.code !== 0) {
    throw new Error(`${file} ${args.join(' ')} failed (${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

beforeAll(async () => {
  const unbuilt = packages.filter(({ dir }) => !existsSync(join(repoRoot, dir, 'dist')));
  if (unbuilt.length > 0)
    throw new Error(`not built: ${unbuilt.map(({ dir }) => dir).join(', ')}; run pnpm build first`);
  work = await mkdtemp(join(tmpdir(), 'openmanus-release-'));
  registry = await startLocalRegistry(join(work, 'registry'));
  const filters = packages.flatMap(({ dir }) => ['--filter', `./${dir}`]);
  await succeed('pnpm', ['-r', ...filters, 'publish', '--registry', registry.url, '--no-git-checks'], {
    cwd: repoRoot,
    env: registry.env,
    timeout: minutes(5),
  });
}, minutes(7));

afterAll(async () => {
  await registry?.close();
  if (work) await rm(work, { recursive: true, force: true, maxRetries: 3 });
});

describe('publishing to a local registry', () => {
  it.each(packages)(
    'publishes $manifest.name with our dependencies as caret ranges of their versions',
    async ({ manifest }) => {
      const published = (await registry?.packument(manifest.name))?.versions[manifest.version];
      expect(published?.version).toBe(manifest.version);
      expect(JSON.stringify(published)).not.toContain('workspace:');
      for (const [field, name] of internalDependencies(manifest)) {
        const range = published?.[field]?.[name];
        expect(range, `${field} ${name}`).toBe(`^${versionOf(name)}`);
      }
    },
  );
});

const [thisMajor = 0, thisMinor = 0] = process.versions.node.split('.').map(Number);
const thisNode = { major: thisMajor, minor: thisMinor };
const oldestNode = SUPPORTED_NODES[0];
// The Node that runs the tests runs both projects; the CommonJS one, which needs require() of an ES
// module graph, runs on the oldest Node we support too.
const projects = [
  { type: 'module', nodes: [thisNode] },
  { type: 'commonjs', nodes: [thisNode, oldestNode] },
] as const;

describe.each(projects)('an outside $type project', ({ type, nodes }) => {
  let project: string;
  let compiled: Awaited<ReturnType<typeof attempt>>;
  const runOn = ({ major, minor }: { major: number; minor: number }, script: string) =>
    succeed(nodeOf(major, minor), [script], { cwd: project, timeout: minutes(1) });

  beforeAll(async () => {
    project = join(work, `outside-${type}`);
    await mkdir(project);
    await cp(join(import.meta.dirname, 'outside'), project, { recursive: true });
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: `outside-${type}`, version: '1.0.0', private: true, type }, null, 2),
    );
    // The TypeScript and Node types the repository builds with; our packages by name, from the registry.
    const devDependencies = rootManifest.devDependencies ?? {};
    const install = ['@openmanus/core', '@openmanus/tools'];
    const tooling = [`typescript@${devDependencies.typescript}`, `@types/node@${devDependencies['@types/node']}`];
    await succeed('npm', ['install', '--prefer-offline', ...install, ...tooling], {
      cwd: project,
      env: registry?.env ?? {},
      timeout: minutes(8),
    });
    compiled = await attempt(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], {
      cwd: project,
      timeout: minutes(3),
    });
  }, minutes(12));

  it('installs @openmanus/core and @openmanus/tools by name from the local registry', async () => {
    const lock = JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; resolved?: string }>;
    };
    for (const name of ['@openmanus/core', '@openmanus/tools']) {
      const installed = lock.packages[`node_modules/${name}`];
      expect(installed?.version, name).toBe(versionOf(name));
      expect(installed?.resolved?.startsWith(registry?.url ?? '-'), name).toBe(true);
    }
  });

  it('type-checks strictly against the published types, skipLibCheck off', async () => {
    expect(compiled).toMatchObject({ code: 0, stdout: '' });
    // TypeScript took the project's module kind: require() in the CommonJS project, import in the ESM one.
    const emitted = await readFile(join(project, 'dist', 'agent.js'), 'utf8');
    if (type === 'commonjs') expect(emitted).toContain('require("@openmanus/core")');
    else expect(emitted).toMatch(/^import .* from '@openmanus\/core';$/m);
  });

  it.each(nodes)(
    'runs a scripted agent that saves a file with file_saver and terminates, on Node $major',
    async (node) => {
      await rm(join(project, 'workspace'), { recursive: true, force: true });
      expect(JSON.parse(await runOn(node, 'dist/agent.js'))).toEqual({
        finishReason: 'terminated',
        answer: 'Saved the note.',
        note: 'saved from outside\n',
      });
    },
  );

  it.each(nodes)("runs Manus's python_execute, on Node $major", async (node) => {
    const printed = JSON.parse(await runOn(node, 'dist/python.js'));
    expect(printed).toMatchObject({ finishReason: 'terminated', answer: 'Six times seven is 42.' });
    expect(String(printed.observation)).toContain('42');
  });
});

// The server's promise: `npm i @openmanus/server` and about ten lines mount agents in a Fastify app.
describe('an outside Fastify app with @openmanus/server', () => {
  let project: string;

  beforeAll(async () => {
    project = join(work, 'outside-server');
    await mkdir(project);
    await cp(join(import.meta.dirname, 'outsideServer'), project, { recursive: true });
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'outside-server', version: '1.0.0', private: true, type: 'module' }, null, 2),
    );
    const devDependencies = rootManifest.devDependencies ?? {};
    const fastify = workspacePackages().find(({ dir }) => dir === 'examples/server-fastify')?.manifest.dependencies
      ?.fastify;
    await succeed(
      'npm',
      [
        'install',
        '--prefer-offline',
        '@openmanus/server',
        '@openmanus/core',
        `fastify@${fastify}`,
        `typescript@${devDependencies.typescript}`,
        `@types/node@${devDependencies['@types/node']}`,
      ],
      { cwd: project, env: registry?.env ?? {}, timeout: minutes(8) },
    );
  }, minutes(10));

  it('type-checks strictly, then serves a run to its answer, its events and the studio', async () => {
    await succeed(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], {
      cwd: project,
      timeout: minutes(3),
    });
    const printed = await succeed(process.execPath, ['dist/app.js'], { cwd: project, timeout: minutes(1) });
    expect(JSON.parse(printed)).toEqual({
      status: 'finished',
      answer: 'Hello from outside!',
      ended: true,
      studio: 200,
    });
  });
});
