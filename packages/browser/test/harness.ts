// One browser per test file, a fresh context (a run of its own) per test, pages from the fixture
// site on 127.0.0.1, and a guard that fails the test if the browser asked for any other host.
import type { LookupAddress } from 'node:dns';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createResourcePool, type LlmPort, type ToolReturn, type ToolScope } from '@openmanus/core';
import { scriptedLlm, type ToolSession, toolSession } from '@openmanus/core/testing';
import type { Resolver } from '@openmanus/tools';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { createBrowserUse } from '../src/browserUse.js';
import { CHROMIUM_ARGS, findChrome } from '../src/launch.js';
import type { BrowserSession } from '../src/session.js';
import type { BrowserUseOptions } from '../src/settings.js';
import { type Site, startServer, startSite } from './site.js';

/**
 * The hosts tests may ask for: the fixture servers, under their address and names that the test
 * resolver maps to it (a cross-site name, and names a hostile page uses).
 */
const TEST_HOSTS = new Set(['127.0.0.1', 'xsite.test', 'evil.test', 'rebind.test']);

/** The system Chromium, or why there is none; in CI a missing browser fails instead of skipping. */
export function chromePath(): string | undefined {
  try {
    return findChrome(undefined, process.env);
  } catch (error) {
    if (process.env.CI) throw error;
    console.warn(`\n*** browser tests skipped: ${(error as Error).message} ***\n`);
    return undefined;
  }
}

/** Names resolve only to the fixture servers: nothing in a test asks real DNS. */
export const testResolver: Resolver = (hostname, _options, callback) => {
  if (hostname === 'xsite.test' || hostname === 'evil.test') {
    callback(null, [{ address: '127.0.0.1', family: 4 } satisfies LookupAddress]);
  } else callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
};

/** Launches the system Chromium with the tool's switches; names other than the test hosts do not resolve. */
export const launchTestBrowser = (executablePath: string, args: readonly string[] = CHROMIUM_ARGS): Promise<Browser> =>
  chromium.launch({
    executablePath,
    args: [...args, '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  });

export interface Harness {
  readonly site: Site;
  /** The cross-site server, reached as `xsite.test:<port>`. */
  readonly xsite: Site;
  readonly browser: Browser;
  /** A browser_use tool in the shared browser, allowed to reach the fixture servers. */
  tool(options?: BrowserUseOptions): ReturnType<typeof createBrowserUse>;
  /** The options `tool` uses: the shared browser, the fixture servers allowed, the request guard. */
  options(options?: BrowserUseOptions): BrowserUseOptions;
  /** A run of the tool: its own context, closed when the test ends. */
  run(tool?: ReturnType<typeof createBrowserUse>, options?: { llm?: LlmPort }): Promise<Run>;
  /** A run calling the tool's own execute, to see what it returns (an image beside the text). */
  direct(tool: ReturnType<typeof createBrowserUse>): Promise<{
    call(args: unknown): Promise<ToolReturn>;
    /** The run's session, as a host (a context provider) gets it. */
    session(): Promise<BrowserSession>;
  }>;
  /** Page state with the servers' ports written as PORT, for golden files. */
  normalize(text: string): string;
}

export interface Run extends ToolSession {
  readonly workspace: string;
  /** Calls the tool and returns what the model reads; fails the test on an error observation. */
  ok(args: Record<string, unknown>): Promise<string>;
  /** Calls the tool and returns the error observation; fails the test on success. */
  fails(args: Record<string, unknown>): Promise<string>;
}

/** The ref of the last element whose line in `state` contains `label`. */
export function refIn(state: string, label: string): string {
  const line = state.split('\n').findLast((candidate) => candidate.includes(label) && /\[ref=/.test(candidate));
  const ref = line && /\[ref=((?:f\d+)?e\d+)\]/.exec(line)?.[1];
  if (!ref) throw new Error(`no element ${label} in the state:\n${state}`);
  return ref;
}

/** For a browser test file (called at its top). */
export function browserHarness(executablePath: string): Harness {
  const stray: string[] = [];
  const open: { close(): Promise<void> }[] = [];
  let site: Site;
  let xsite: Site;
  let browser: Browser;

  beforeAll(async () => {
    [site, xsite, browser] = await Promise.all([
      startSite(),
      startServer(async (request, response) => {
        if (request.url !== '/cross.html') return false;
        const { readFile } = await import('node:fs/promises');
        const body = await readFile(join(import.meta.dirname, 'fixtures', 'site', 'cross.html'), 'utf8');
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
        return true;
      }),
      launchTestBrowser(executablePath),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([site?.close(), xsite?.close()]);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((item) => item.close()));
    expect(stray.splice(0), 'requests to hosts other than the fixture servers').toEqual([]);
  });

  const harness: Harness = {
    get site() {
      return site;
    },
    get xsite() {
      return xsite;
    },
    get browser() {
      return browser;
    },
    tool: (options = {}) => createBrowserUse(harness.options(options)),
    options: (options = {}) => ({
      browser,
      allowHosts: [site.host, `xsite.test:${xsite.port}`],
      resolve: testResolver,
      // Only a hung action reaches it, however loaded the machine (the library's default is 5 s).
      actionTimeoutMs: 30_000,
      ...options,
      onContext: async (context) => {
        context.on('request', (request) => {
          const url = new URL(request.url());
          if ((url.protocol === 'http:' || url.protocol === 'https:') && !TEST_HOSTS.has(url.hostname)) {
            stray.push(url.href);
          }
        });
        await options.onContext?.(context);
      },
    }),
    async run(tool = harness.tool(), options = {}) {
      const workspace = await realpath(await mkdtemp(join(tmpdir(), 'openmanus-browser-test-')));
      const session = toolSession(tool, { workspace, ...(options.llm ? { llm: options.llm } : {}) });
      open.push({
        close: async () => {
          await session.close();
          await rm(workspace, { recursive: true, force: true });
        },
      });
      return {
        ...session,
        get data() {
          return session.data;
        },
        workspace,
        async ok(args) {
          const result = await session.call(args);
          expect(result.isError, result.output).toBe(false);
          return result.output;
        },
        async fails(args) {
          const result = await session.call(args);
          expect(result.isError, result.output).toBe(true);
          return result.output;
        },
      };
    },
    async direct(tool) {
      const workspace = await realpath(await mkdtemp(join(tmpdir(), 'openmanus-browser-test-')));
      const pool = createResourcePool();
      const ended = new AbortController();
      open.push({
        close: async () => {
          ended.abort();
          await pool.close();
          await rm(workspace, { recursive: true, force: true });
        },
      });
      let seq = 0;
      const scope = (id: string): ToolScope => ({
        runId: 'direct',
        signal: ended.signal,
        workspace,
        llm: scriptedLlm([]),
        resource: (key, make, close) => pool.get(key, make, close),
        emit: () => {},
        changeTools: async () => {},
        callId: id,
        effectId: id,
        saveProgress: () => {},
        data: undefined,
        setData: () => {},
        addUsage: () => {},
        reportProgress: () => {},
        log: () => {},
        elicit: async () => ({ action: 'cancel' }),
        sample: async () => {
          throw new Error('no model to sample in this test');
        },
      });
      return {
        async call(args) {
          const parsed = tool.parse(args);
          if (!parsed.isOk()) throw new Error(parsed.error);
          return tool.execute(parsed.value, scope(`call-${++seq}`));
        },
        session: () => tool.session(scope('host')),
      };
    },
    normalize: (text) =>
      text
        .replaceAll(`xport=${xsite.port}`, 'xport=XPORT')
        .replaceAll(`127.0.0.1:${site.port}`, '127.0.0.1:PORT')
        .replaceAll(`xsite.test:${xsite.port}`, 'xsite.test:XPORT'),
  };
  return harness;
}
