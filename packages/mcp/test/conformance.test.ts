// The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16) against our server
// (conformance/server.ts) and our client (conformance/client.ts). conformance/baseline.yml lists the
// scenarios that fail today; the suite exits non-zero for a failure not listed there and for a
// listed one that now passes, so every fix and every regression shows up here.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConformanceServer } from './conformance/server.js';
import { packageDir } from './helpers.js';

const suite = join(packageDir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const baseline = join(import.meta.dirname, 'conformance', 'baseline.yml');
// The suite splits the command at spaces, so no path in it may hold one.
const clientCommand = `${process.execPath} --experimental-strip-types --no-warnings ${join(import.meta.dirname, 'conformance', 'client.ts')}`;
/**
 * `--suite all` of the client side, in parts run one after another: all at once, the auth scenarios'
 * sign-ins keep the suite's own process busy while it times sse-retry's reconnection (to within
 * 200 ms), and that check fails for load alone. The four plain scenarios go one by one, then the auth
 * suites; together they are the 26 of `all` (a baseline entry not in a part is not judged by it).
 */
const CLIENT_PARTS = [
  ['--scenario', 'initialize'],
  ['--scenario', 'tools_call'],
  ['--scenario', 'elicitation-sep1034-client-defaults'],
  ['--scenario', 'sse-retry'],
  ['--suite', 'auth'],
  ['--suite', 'backcompat'],
  ['--suite', 'extensions'],
  ['--suite', 'draft'],
] as const;
/** A backstop for a hung suite only; a whole run takes seconds. */
const RUN_LIMIT_MS = 240_000;

/** Runs the suite; settles with its exit code and what it printed (both streams, in order). */
function conformance(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // A process group of its own, so that a hung run is ended with the clients it started.
    const child = spawn(process.execPath, [suite, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, RUN_LIMIT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Each scenario's outcome from the results directory: `<prefix><scenario>-<timestamp>/checks.json`. */
async function outcomes(dir: string, prefix = ''): Promise<Map<string, 'passed' | 'failed'>> {
  const found = new Map<string, 'passed' | 'failed'>();
  for (const entry of await readdir(dir, { recursive: true })) {
    if (!entry.endsWith(`${sep}checks.json`)) continue;
    const checks = JSON.parse(await readFile(join(dir, entry), 'utf8')) as { status: string }[];
    const scenario = dirname(entry)
      .split(sep)
      .join('/')
      .replace(/-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/, '')
      .slice(prefix.length);
    // As the suite judges a baseline: a warning counts as a failure.
    const failed = checks.some((check) => check.status === 'FAILURE' || check.status === 'WARNING');
    found.set(scenario, failed ? 'failed' : 'passed');
  }
  return found;
}

/** "8 of 32": how many of the scenarios found pass. */
const passing = (found: ReadonlyMap<string, 'passed' | 'failed'>) =>
  `${[...found.values()].filter((outcome) => outcome === 'passed').length} of ${found.size}`;

/** "server: 8 of 32 scenarios pass; failing: …", for the test's output. */
const summary = (side: string, found: ReadonlyMap<string, 'passed' | 'failed'>) =>
  `${side}: ${passing(found)} scenarios pass; failing: ${[...found]
    .flatMap(([scenario, outcome]) => (outcome === 'failed' ? [scenario] : []))
    .sort()
    .join(', ')}`;

/** The count the README gives, from "**8 of 32 server scenarios**": it must say how things stand. */
async function readmeCount(side: string): Promise<string | undefined> {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  return new RegExp(`\\*\\*(\\d+ of \\d+) ${side} scenarios\\*\\*`).exec(readme)?.[1];
}

/** The suite's verdict on the baseline (the stale entries and the unexpected failures), or the end of its output. */
function verdict(output: string): string {
  const found = ['Stale baseline entries', 'Unexpected failures (not in baseline)'].map((title) =>
    output.indexOf(title),
  );
  const from = Math.min(...found.filter((at) => at !== -1));
  return Number.isFinite(from) ? output.slice(from) : output.slice(-4_000);
}

describe('the MCP conformance suite', () => {
  let results: string;
  beforeAll(async () => {
    results = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  });
  afterAll(async () => {
    await rm(results, { recursive: true, force: true });
  });

  it(
    'our server passes every server scenario but those of the baseline',
    async () => {
      const server = await startConformanceServer();
      try {
        const dir = join(results, 'server');
        const run = await conformance([
          'server',
          '--url',
          server.url,
          '--suite',
          'all',
          '--expected-failures',
          baseline,
          '-o',
          dir,
        ]);
        const found = await outcomes(dir, 'server-');
        console.log(summary('server', found));
        expect(found.size).toBe(32);
        expect(run.code, verdict(run.output)).toBe(0);
        expect(await readmeCount('server'), 'the count in the README').toBe(passing(found));
      } finally {
        await server.close();
      }
    },
    RUN_LIMIT_MS + 30_000,
  );

  it(
    'our client passes every client scenario but those of the baseline',
    async () => {
      const dir = join(results, 'client');
      const runs: { code: number | null; output: string }[] = [];
      for (const part of CLIENT_PARTS) {
        runs.push(
          await conformance([
            'client',
            '--command',
            clientCommand,
            ...part,
            '--timeout',
            '60000',
            '--expected-failures',
            baseline,
            '-o',
            dir,
          ]),
        );
      }
      const found = await outcomes(dir);
      console.log(summary('client', found));
      expect(found.size).toBe(26);
      for (const run of runs) expect(run.code, verdict(run.output)).toBe(0);
      expect(await readmeCount('client'), 'the count in the README').toBe(passing(found));
    },
    RUN_LIMIT_MS + 30_000,
  );
});
