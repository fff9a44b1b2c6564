import { writeFile } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  type OpenAiServer,
  processesMatching,
  type RecordedRequest,
  type ScriptEntry,
  startOpenAiServer,
} from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startTravelSite } from '../src/travelSite.js';
import { chromePath, runNode, tempDir } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function model(script: ScriptEntry<RecordedRequest>[]): Promise<OpenAiServer> {
  const server = await startOpenAiServer({ script });
  closers.push(() => server.close());
  return server;
}

/** A real HTTP server on 127.0.0.1 that records the path of every request it gets. */
async function site(handler: RequestListener) {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

/** A config.toml in a fresh directory, with `[llm]` pointing at the scripted model. */
async function configFile(server: OpenAiServer, rest = '') {
  const dir = await tempDir();
  const file = join(dir, 'config.toml');
  await writeFile(file, `[llm]\nmodel = "base-model"\nbase_url = "${server.baseURL}"\napi_key = "sk-test"\n${rest}`);
  return file;
}

const toolNames = (request: RecordedRequest | undefined) =>
  (request?.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
/** The page state a browser agent is sent before each step answers a call of its own (not the model's). */
const PAGE_STATE_CALL = 'browser_page_state';
const toolMessages = (request: RecordedRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === 'tool') as { tool_call_id?: string; content?: unknown }[];
/** What the model's own last call was answered with. */
const lastObservation = (request: RecordedRequest | undefined) =>
  toolMessages(request)
    .filter((m) => m.tool_call_id !== PAGE_STATE_CALL)
    .at(-1)?.content;
const pageState = (request: RecordedRequest | undefined) =>
  String(toolMessages(request).find((m) => m.tool_call_id === PAGE_STATE_CALL)?.content);

const done = { content: 'All done.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] };

describe('openmanus --agent', () => {
  it('Manus, the default, offers the model web_search, web_fetch and browser_use besides its own tools', async () => {
    const server = await model([done, done]);
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    for (const args of [[], ['--agent', 'manus']]) {
      const { code, stderr } = await runNode('cli.js', [...args, '--workspace', await tempDir(), 'finish'], { env });
      expect(code, stderr).toBe(0);
    }
    for (const request of server.requests) {
      expect(toolNames(request)).toEqual([
        'python_execute',
        'str_replace_editor',
        'ask_human',
        'terminate',
        'web_search',
        'web_fetch',
        'browser_use',
      ]);
    }
    expect(server.requests).toHaveLength(2);
  });

  it("web_fetch from the terminal still refuses this machine's addresses", async () => {
    const secret = await site((_, res) => res.end('internal secret'));
    const server = await model([
      { toolCalls: [{ name: 'web_fetch', arguments: { urls: `${secret.origin}/admin` } }] },
      done,
    ]);
    const { code, stderr } = await runNode('cli.js', ['--workspace', await tempDir(), 'read the admin page'], {
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL },
    });
    expect(code, stderr).toBe(0);
    expect(lastObservation(server.requests[1])).toMatch(/refused: 127\.0\.0\.1 is a loopback address/);
    expect(lastObservation(server.requests[1])).not.toContain('internal secret');
    expect(secret.paths).toEqual([]);
  });

  it('[search] of config.toml sets up web_search: its engine, language and country (result pages on this machine stay unfetched)', async () => {
    const pages = await site((_, res) => res.end('a page on this machine'));
    const searxng = await site((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          results: [
            { url: `${pages.origin}/kinkakuji`, title: 'Kinkaku-ji', content: 'The <b>Golden</b> Pavilion' },
            { url: `${pages.origin}/ginkakuji`, title: 'Ginkaku-ji', content: 'The Silver Pavilion' },
          ],
        }),
      );
    });
    const server = await model([
      {
        toolCalls: [{ name: 'web_search', arguments: { query: 'Kyoto temples', num_results: 2, fetch_content: true } }],
      },
      done,
    ]);
    const config = await configFile(
      server,
      `[search]\nengine = "SearXNG"\nsearxng_url = "${searxng.origin}"\nfallback_engines = []\nmax_retries = 0\nlang = "de"\ncountry = "at"\n`,
    );
    const { code, stderr } = await runNode(
      'cli.js',
      ['--config', config, '--workspace', await tempDir(), 'find temples'],
      {},
    );
    expect(code, stderr).toBe(0);
    expect(searxng.paths).toEqual(['/search?q=Kyoto+temples&format=json&language=de-AT&pageno=1']);
    const observation = String(lastObservation(server.requests[1]));
    expect(observation).toContain(
      `1. Kinkaku-ji\n   URL: ${pages.origin}/kinkakuji\n   Description: The Golden Pavilion\n   Content: not fetched, refused: 127.0.0.1 is a loopback address`,
    );
    expect(observation).toContain(`2. Ginkaku-ji\n   URL: ${pages.origin}/ginkakuji`);
    expect(observation).toMatch(/- Language: de\n- Country: at\n- Engine: searxng$/);
    expect(pages.paths).toEqual([]);
  });

  it('each agent uses its own [llm.<name>] profile and its own tools', async () => {
    const server = await model([done, done, done]);
    const config = await configFile(
      server,
      '[llm.manus]\nmodel = "manus-model"\n[llm.swe]\nmodel = "swe-model"\n[llm.data_analysis]\nmodel = "analyst-model"\n',
    );
    for (const agent of ['manus', 'swe', 'data_analysis']) {
      const { code, stderr } = await runNode(
        'cli.js',
        ['--agent', agent, '--config', config, '--workspace', await tempDir(), 'finish'],
        {},
      );
      expect(code, stderr).toBe(0);
    }
    expect(server.requests.map((r) => r.model)).toEqual(['manus-model', 'swe-model', 'analyst-model']);
    expect(toolNames(server.requests[1])).toEqual(['bash', 'str_replace_editor', 'terminate']);
    expect(toolNames(server.requests[2])).toEqual([
      'python_execute',
      'visualization_preparation',
      'data_visualization',
      'terminate',
    ]);
  });

  it('--agent swe runs the commands the model gives in a shell in the workspace', async () => {
    const workspace = await tempDir();
    const server = await model([
      { toolCalls: [{ name: 'bash', arguments: { command: 'mkdir sub && cd sub && echo $((6 * 7))' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'pwd' } }] },
      { content: 'The answer is 42.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const { code, stdout, stderr } = await runNode('cli.js', ['--agent', 'swe', '--workspace', workspace, 'compute'], {
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL },
    });
    expect(code, stderr).toBe(0);
    expect(stdout).toBe('The answer is 42.\n');
    expect(stderr).toContain('→ bash(command: "pwd")');
    expect(lastObservation(server.requests[1])).toBe('42\n[exit code 0]');
    // The shell persists across calls: the second command runs where the first one went.
    expect(lastObservation(server.requests[2])).toBe(`${workspace}/sub\n[exit code 0]`);
    expect(String(server.requests[0]?.messages[0]?.content)).toContain(workspace);
  });

  it('Ctrl+C under --agent swe stops the command and leaves no process behind, background ones included', async () => {
    // Unique durations make the processes findable by their command lines.
    const nap = () => `sleep 30.${Math.floor(Math.random() * 1e8) + 1e8}`;
    const [background, foreground] = [nap(), nap()];
    const server = await model([
      { toolCalls: [{ name: 'bash', arguments: { command: `${background} & ${foreground}`, timeout: 60 } }] },
    ]);
    const { code, stderr } = await runNode('cli.js', ['--agent', 'swe', '--workspace', await tempDir(), 'wait'], {
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL },
      onStart: (child) => {
        const running = () => [foreground, background].every((nap) => processesMatching(nap).length > 0);
        const interruptOnceRunning = () => (running() ? child.kill('SIGINT') : setTimeout(interruptOnceRunning, 20));
        child.stderr?.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('→ bash')) interruptOnceRunning();
        });
      },
    });
    expect(code, stderr).toBe(130);
    expect(stderr).toMatch(/■ cancelled after 1 step\(s\)/);
    expect(processesMatching(foreground)).toEqual([]);
    expect(processesMatching(background)).toEqual([]);
  });

  it("the profile's max_input_tokens holds for the chosen agent", async () => {
    const server = await model([done]);
    const config = await configFile(server, '[llm.swe]\nmax_input_tokens = 10\n');
    const { code, stderr } = await runNode(
      'cli.js',
      ['--agent', 'swe', '--config', config, '--workspace', await tempDir(), 'a task'],
      {},
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(/openmanus: stopped \(token_limit\)/);
    expect(server.hits).toBe(0);
  });

  it('an unknown agent is a clear error naming the choices, and nothing runs', async () => {
    const server = await model([done]);
    const { code, stdout, stderr } = await runNode('cli.js', ['--agent', 'toaster', 'x'], {
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL },
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe('openmanus: --agent must be "manus", "swe", "data_analysis" or "browser", got "toaster"\n');
    expect(server.hits).toBe(0);
    expect((await runNode('cli.js', ['--agent'], {})).stderr).toMatch(
      /^openmanus: Option '--agent <value>' argument missing/,
    );
  });

  it('--help documents --agent and the agents', async () => {
    const { code, stdout } = await runNode('cli.js', ['--help'], {});
    expect(code).toBe(0);
    expect(stdout).toContain('--agent <name>       manus (default), swe, data_analysis or browser');
    expect(stdout).toMatch(/^ {2}swe {12}a programmer: bash, str_replace_editor and terminate$/m);
    expect(stdout).toMatch(/^ {2}data_analysis {2}python_execute, visualization_preparation/m);
    expect(stdout).toMatch(/^ {2}browser {8}a browser agent: browser_use \(set up by \[browser\] in config\.toml\)/m);
  });
});

describe.skipIf(!chromePath())('openmanus and the browser', () => {
  const lastPrompt = (request: RecordedRequest | undefined) =>
    String(request?.messages.filter((m) => m.role === 'user').at(-1)?.content);

  it('--agent browser browses the bundled travel site that [browser].allow_hosts lets it reach, then terminates', async () => {
    const travel = await startTravelSite();
    closers.push(() => travel.close());
    const page = new URL('sights/kinkaku-ji.html', travel.url).href;
    const server = await model([
      { toolCalls: [{ name: 'browser_use', arguments: { action: 'go_to_url', url: page } }] },
      { toolCalls: [{ name: 'browser_use', arguments: { action: 'find', text: 'yen' } }] },
      done,
    ]);
    const config = await configFile(
      server,
      `[llm.browser]\nmodel = "browser-model"\n[browser]\nallow_hosts = ["${new URL(travel.url).host}"]\n`,
    );
    const { code, stdout, stderr } = await runNode(
      'cli.js',
      ['--agent', 'browser', '--config', config, '--workspace', await tempDir(), 'What does Kinkaku-ji cost?'],
      {},
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toBe('All done.\n');
    expect(server.requests.map((r) => r.model)).toEqual(['browser-model', 'browser-model', 'browser-model']);
    expect(toolNames(server.requests[0])).toEqual(['browser_use', 'terminate']);
    const opened = String(lastObservation(server.requests[1]));
    // The result is kept as what the action did and the page it left; the page state comes with the context.
    expect(opened).toMatch(
      /^Navigated to http:\/\/127\.0\.0\.1:\d+\/sights\/kinkaku-ji\.html\.\nThe tab was then on http:\/\/127\.0\.0\.1:\d+\/sights\/kinkaku-ji\.html\./,
    );
    expect(pageState(server.requests[1])).toContain('Title: Kinkaku-ji: hours, admission and how to get there');
    // The page comes into the next step while the browser is in use: as a tool's result, marked as
    // page content, never in the user's words.
    expect(pageState(server.requests[1])).toMatch(
      /^The browser now, before this step:\n<page_content untrusted="true">\nURL: http:\/\/127\.0\.0\.1:\d+\/sights\/kinkaku-ji/,
    );
    expect(lastPrompt(server.requests[1])).not.toContain('Kinkaku-ji: hours');
    expect(String(lastObservation(server.requests[2]))).toMatch(/yen/);
  });

  it("Manus's browser_use refuses this machine's addresses unless [browser].allow_hosts names them", async () => {
    const travel = await startTravelSite();
    closers.push(() => travel.close());
    const server = await model([
      { toolCalls: [{ name: 'browser_use', arguments: { action: 'go_to_url', url: travel.url } }] },
      done,
    ]);
    const { code, stderr } = await runNode('cli.js', ['--workspace', await tempDir(), 'open the site'], {
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL },
    });
    expect(code, stderr).toBe(0);
    expect(lastObservation(server.requests[1])).toMatch(/refused: 127\.0\.0\.1 is a loopback address/);
    expect(lastObservation(server.requests[1])).not.toContain('Kyoto Journeys');
  });
});
