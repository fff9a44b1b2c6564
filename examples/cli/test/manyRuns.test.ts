// Many runs of different agents in one process, all started at once against one scripted model
// server that answers each request by the run's own token: Manus running Python in its own
// workspace, browser agents in one shared Chromium (a context each) reading a page made for their
// token, and MCP agents — most sharing one client (one stdio session, as a host keeps it), some
// with a client of their own (an HTTP session each, whose state the server keeps per session).
// Nothing of one run may show up in another: not in what the model was sent, not in a run's
// state, answer, files or observations. Afterwards no browser, sandbox or MCP server is left.

import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createBrowserAgent } from '@openmanus/browser';
import { createManus, createOpenAiLlm, type RunOutcome, run } from '@openmanus/core';
import { processesMatching, type RecordedRequest, startOpenAiServer } from '@openmanus/core/testing';
import { createMcpAgent, createMcpClient } from '@openmanus/mcp';
import { afterAll, describe, expect, it } from 'vitest';
import { chromePath, tempDir } from './helpers.js';

const COUNTS = { python: 20, browser: 10, mcp: 20, session: 6 } as const;
type Kind = keyof typeof COUNTS;

/** Every run's token: its kind, its number and random digits, e.g. `python-007-3fa9c1d2`. */
const TOKEN = /\b(?:python|browser|mcp|session)-\d{3}-[0-9a-f]{8}\b/g;
const tokensIn = (text: string) => new Set(text.match(TOKEN) ?? []);
const digestOf = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 12);

const memoServer = join(import.meta.dirname, 'fixtures', 'memoServer.mjs');
const marker = `manyruns-${randomBytes(6).toString('hex')}`;
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** The model: it answers each request by the run's token, which the first user message names. */
const model = (pagesUrl: string) => (request: RecordedRequest) => {
  const task = String(request.messages.find((m) => m.role === 'user')?.content ?? '');
  const [token] = tokensIn(task);
  if (!token) return { error: { status: 400, message: `no token in the task: ${task}` } };
  const kind = token.split('-')[0] as Kind;
  const turn = request.messages.filter((m) => m.role === 'assistant').length;
  const seen = String(request.messages.findLast((m) => m.role === 'tool')?.content ?? '');
  const calls = {
    python: [
      {
        name: 'python_execute',
        arguments: {
          code: [
            'import hashlib, pathlib',
            `token = "${token}"`,
            'digest = hashlib.sha256(token.encode()).hexdigest()[:12]',
            'pathlib.Path(token + ".txt").write_text(digest)',
            'print(token, digest)',
          ].join('\n'),
        },
      },
    ],
    browser: [{ name: 'browser_use', arguments: { action: 'go_to_url', url: `${pagesUrl}/page/${token}` } }],
    // Later numbers answer sooner: calls sent together over the one session come back in another order.
    mcp: [{ name: 'mcp_memo_echo_later', arguments: { text: token, ms: 200 - 10 * Number(token.split('-')[1]) } }],
    session: [
      { name: 'mcp_memo_remember', arguments: { value: token } },
      { name: 'mcp_memo_recall', arguments: {} },
    ],
  }[kind];
  const call = calls[turn];
  return call ? { toolCalls: [call] } : { content: `${token} saw: ${seen}` };
};

/** A page on 127.0.0.1 made for the token in its path: its title and a link carry the token's digest. */
async function startPages() {
  const requested: string[] = [];
  const server = createServer((req, res) => {
    requested.push(req.url ?? '');
    const token = /^\/page\/([\w-]+)$/.exec(req.url ?? '')?.[1];
    if (!token) return void res.writeHead(404).end();
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        `<!doctype html><title>${token} ${digestOf(token)}</title><h1>${token}</h1><a href="/page/${token}">${digestOf(token)}</a>`,
      );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requested,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The memo server over streamable HTTP, in a process of its own: its URL and how many sessions it has open. */
async function startMemoHttp() {
  const child = spawn(process.execPath, [memoServer, '--http', '--marker', marker], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const base = `http://127.0.0.1:${JSON.parse(String(line)).port}`;
  return {
    url: `${base}/mcp`,
    open: async () => ((await (await fetch(`${base}/sessions`)).json()) as { open: number }).open,
    close: async () => {
      child.kill();
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    },
  };
}

describe.skipIf(!chromePath())('many runs in one process', () => {
  it('Manus with Python, browser agents and MCP agents started at once keep to their own state, pages, files and sessions', async () => {
    const root = await tempDir();
    closers.push(() => rm(root, { recursive: true, force: true }));
    const pages = await startPages();
    closers.push(() => pages.close());
    const server = await startOpenAiServer({ script: model(pages.url) });
    closers.push(() => server.close());
    const memoHttp = await startMemoHttp();
    closers.push(() => memoHttp.close());

    const llm = createOpenAiLlm({ model: 'scripted-model', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
    // One agent for every browser run (one Chromium, a context per run), one MCP client for the MCP runs.
    const browserAgent = createBrowserAgent({
      allowHosts: [pages.host],
      extraChromiumArgs: [`--openmanus-test-marker=${marker}`],
    });
    const mcp = createMcpClient({
      servers: { memo: { command: process.execPath, args: [memoServer, '--marker', marker] } },
    });
    closers.push(() => mcp.close());
    const mcpAgent = createMcpAgent({ client: mcp });

    const suffix = () => randomBytes(4).toString('hex');
    const tokens = (Object.keys(COUNTS) as Kind[]).flatMap((kind) =>
      Array.from({ length: COUNTS[kind] }, (_, i) => `${kind}-${String(i).padStart(3, '0')}-${suffix()}`),
    );
    const start = async (token: string): Promise<RunOutcome> => {
      const task = `Task of run ${token}.`;
      switch (token.split('-')[0] as Kind) {
        case 'python': {
          const workspace = join(root, token);
          await mkdir(workspace);
          return run(createManus({ workspace }), task, { llm });
        }
        case 'browser':
          return run(browserAgent, task, { llm, workspace: root });
        case 'mcp':
          return run(mcpAgent, task, { llm });
        case 'session': {
          // A client of its own: its own MCP session, closed when the run is done.
          const own = createMcpAgent({ servers: { memo: { type: 'http', url: memoHttp.url } } });
          try {
            return await run(own, task, { llm });
          } finally {
            await own.close();
          }
        }
      }
    };
    const outcomes = await Promise.all(tokens.map(start));

    const expected = (token: string) =>
      ({
        python: `${token} ${digestOf(token)}`,
        browser: `Title: ${token} ${digestOf(token)}`,
        mcp: `echo ${token}`,
        session: JSON.stringify([token]),
      })[token.split('-')[0] as Kind];
    outcomes.forEach((outcome, i) => {
      const token = tokens[i] as string;
      expect(outcome.status, `${token}: ${outcome.error?.message}`).toBe('finished');
      expect(outcome.answer).toMatch(new RegExp(`^${token} saw: `));
      expect(outcome.answer).toContain(expected(token));
      // Its whole state — messages, observations, page states, tools — names no other run.
      expect([...tokensIn(JSON.stringify(outcome.state))], token).toEqual([token]);
    });
    // Every request the model got was about one run only, and each run made the calls it was scripted to.
    for (const request of server.requests) expect(tokensIn(JSON.stringify(request.messages)).size).toBe(1);
    const turns = { python: 2, browser: 2, mcp: 2, session: 3 };
    const calls = (Object.keys(COUNTS) as Kind[]).reduce((sum, kind) => sum + COUNTS[kind] * turns[kind], 0);
    expect(server.requests.length).toBe(calls);
    // Each Python run wrote one file, named by its token, holding its digest — in its own workspace.
    for (const token of tokens.filter((t) => t.startsWith('python-'))) {
      expect(await readdir(join(root, token))).toEqual([`${token}.txt`]);
      expect(await readFile(join(root, token, `${token}.txt`), 'utf8')).toBe(digestOf(token));
    }
    expect(pages.requested.filter((path) => path.startsWith('/page/')).sort()).toEqual(
      tokens.filter((t) => t.startsWith('browser-')).map((t) => `/page/${t}`),
    );

    // Nothing is left: the browser closed with its last run, every session's HTTP session ended, and
    // once the host closes its client the stdio server is gone too.
    expect(await memoHttp.open()).toBe(0);
    await mcp.close();
    await memoHttp.close();
    // A backstop only: the stdio server ends when its pipe closes.
    const end = Date.now() + 60_000;
    while (processesMatching(marker).length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(processesMatching(marker)).toEqual([]);
    expect(processesMatching(root)).toEqual([]);
  });
});
