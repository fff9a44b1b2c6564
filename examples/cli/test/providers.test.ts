// Every agent, the MCP agent and the planning flow, run through the built CLI as a user would,
// on each provider config.toml can name: `api_type` picks the wire, and each provider's stand-in
// (a real HTTP server speaking that provider's API) answers from the same scripts. Each test
// checks the outcome and that the requests reached the stand-in in its wire format, every tool
// call of the history answered there in that wire's own terms.
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  type ScriptedReply,
  startAnthropicServer,
  startBedrockServer,
  startGeminiServer,
  startOpenAiServer,
} from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { chromePath, runNode, tempDir } from './helpers.js';
import { startHttpServer } from './mcpHelpers.js';

/** A tool call the model made in a request's history, with what it was answered with there (undefined: no answer). */
interface AnsweredCall {
  readonly name: string;
  readonly result: string | undefined;
}

interface StandIn {
  readonly baseURL: string;
  readonly requests: readonly unknown[];
  readonly paths: readonly string[];
  close(): Promise<void>;
}

/** A provider as config.toml names it, its stand-in, and how its wire spells a request. */
interface Provider {
  readonly name: string;
  readonly apiType: string;
  readonly model: string;
  /** The provider's own key variable (the config file has no key). */
  readonly env: Record<string, string>;
  start(script: readonly ScriptedReply[]): Promise<StandIn>;
  /** Every request's path on this wire. */
  readonly path: RegExp;
  modelOf(request: unknown, path: string): string | undefined;
  toolsOf(request: unknown): string[];
  callsOf(request: unknown): AnsweredCall[];
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { text?: string }) => part.text ?? '').join('')
      : JSON.stringify(content);

interface OpenAiMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string } }[];
  tool_call_id?: string;
}
const openai: Provider = {
  name: 'OpenAI-compatible',
  apiType: 'openai',
  model: 'gpt-4o-mini',
  env: { OPENAI_API_KEY: 'sk-test' },
  start: (script) => startOpenAiServer({ script }),
  path: /^\/v1\/chat\/completions$/,
  modelOf: (request) => (request as { model?: string }).model,
  toolsOf: (request) =>
    ((request as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name),
  callsOf(request) {
    const messages = (request as { messages: OpenAiMessage[] }).messages;
    return messages.flatMap((message) =>
      (message.tool_calls ?? []).map((call) => {
        const answer = messages.find((m) => m.role === 'tool' && m.tool_call_id === call.id);
        return { name: call.function.name, result: answer && textOf(answer.content) };
      }),
    );
  },
};

type AnthropicBlock = { type: string; id?: string; name?: string; tool_use_id?: string; content?: unknown };
const anthropic: Provider = {
  name: 'Anthropic',
  apiType: 'anthropic',
  model: 'claude-sonnet-4-5',
  env: { ANTHROPIC_API_KEY: 'sk-ant-test' },
  start: (script) => startAnthropicServer({ script }),
  path: /^\/v1\/messages$/,
  modelOf: (request) => (request as { model?: string }).model,
  toolsOf: (request) => ((request as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name),
  callsOf(request) {
    const blocks = (request as { messages: { content: string | AnthropicBlock[] }[] }).messages.flatMap((m) =>
      typeof m.content === 'string' ? [] : m.content,
    );
    // Each tool_use block is answered by a tool_result block carrying its id.
    return blocks
      .filter((block) => block.type === 'tool_use')
      .map((use) => {
        const answer = blocks.find((block) => block.type === 'tool_result' && block.tool_use_id === use.id);
        return { name: String(use.name), result: answer && textOf(answer.content) };
      });
  },
};

type GeminiContent = {
  role: string;
  parts: { functionCall?: { name: string }; functionResponse?: { name: string; response: unknown } }[];
};
const google: Provider = {
  name: 'Google',
  apiType: 'google',
  model: 'gemini-2.5-flash',
  env: { GEMINI_API_KEY: 'g-test' },
  start: (script) => startGeminiServer({ script }),
  path: /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent\?alt=sse)$/,
  modelOf: (_, path) => /\/models\/([^/:]+):/.exec(path)?.[1],
  toolsOf: (request) =>
    ((request as { tools?: { functionDeclarations?: { name: string }[] }[] }).tools ?? []).flatMap((tool) =>
      (tool.functionDeclarations ?? []).map((declaration) => declaration.name),
    ),
  callsOf(request) {
    // The model's function calls are answered, in order and by name, by the next content's function responses.
    const contents = (request as { contents: GeminiContent[] }).contents;
    return contents.flatMap((content, i) => {
      const responses = (contents[i + 1]?.parts ?? []).flatMap((part) => part.functionResponse ?? []);
      return content.parts
        .flatMap((part) => part.functionCall ?? [])
        .map((call, k) => {
          const answer = responses[k]?.name === call.name ? responses[k] : undefined;
          return { name: call.name, result: answer && textOf((answer.response as { content?: unknown }).content) };
        });
    });
  },
};

type BedrockBlock = {
  toolUse?: { toolUseId: string; name: string };
  toolResult?: { toolUseId: string; content: { text?: string }[] };
};
const bedrock: Provider = {
  name: 'Bedrock',
  apiType: 'aws',
  model: 'us.anthropic.claude-3-7-sonnet-20250219-v1:0',
  // The CLI runs with none of this machine's variables: the AWS credential chain reads these.
  env: { AWS_ACCESS_KEY_ID: 'AKIDTEST', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'us-west-2' },
  start: async (script) => {
    const server = await startBedrockServer({ script });
    return { baseURL: server.endpoint, requests: server.requests, paths: server.paths, close: server.close };
  },
  path: /^\/model\/[^/]+\/converse(-stream)?$/,
  modelOf: (request) => (request as { modelId?: string }).modelId,
  toolsOf: (request) =>
    ((request as { toolConfig?: { tools: { toolSpec?: { name: string } }[] } }).toolConfig?.tools ?? []).flatMap(
      (tool) => (tool.toolSpec ? [tool.toolSpec.name] : []),
    ),
  callsOf(request) {
    // Each toolUse block is answered by a toolResult block carrying its toolUseId.
    const blocks = (request as { messages: { content: BedrockBlock[] }[] }).messages.flatMap((m) => m.content);
    return blocks.flatMap((block) => {
      const use = block.toolUse;
      if (!use) return [];
      const answer = blocks.find((b) => b.toolResult?.toolUseId === use.toolUseId)?.toolResult;
      return [{ name: use.name, result: answer && answer.content.map((part) => part.text ?? '').join('') }];
    });
  },
};

const PROVIDERS = [openai, anthropic, google, bedrock];

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function standIn(provider: Provider, script: readonly ScriptedReply[]): Promise<StandIn> {
  const server = await provider.start(script);
  closers.push(() => server.close());
  return server;
}

/** A config.toml with `[llm]` on the provider's stand-in (its key comes from the provider's variable), then `more`. */
async function configFor(provider: Provider, server: StandIn, more = '') {
  const file = join(await tempDir(), 'config.toml');
  const llm = `[llm]\napi_type = "${provider.apiType}"\nmodel = "${provider.model}"\nbase_url = "${server.baseURL}"\n`;
  await writeFile(file, `${llm}${more}`);
  return file;
}

/** The built CLI with `args`, on the provider's key variable. */
const openmanus = (provider: Provider, args: string[]) => runNode('cli.js', args, { env: provider.env });

/** A page on 127.0.0.1 for the browser to open. */
async function page(html: string) {
  const server = createServer((_, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const terminate = (content: string): ScriptedReply => ({
  content,
  toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }],
});

/** The page state a browser agent is sent before a step: a browser_use call of its own (not the model's) and its result. */
const isPageState = (call: AnsweredCall) => call.result?.startsWith('The browser now, before this step:') ?? false;

/**
 * What the stand-in received, checked against its wire: every request on the provider's path for
 * its model, and in the last one each tool call of the history answered in the wire's own form;
 * gives the model's calls (the page state left out) with their answers.
 */
function modelCalls(provider: Provider, server: StandIn, model = provider.model): AnsweredCall[] {
  expect(
    server.paths.every((path) => provider.path.test(path)),
    server.paths.join(', '),
  ).toBe(true);
  expect(server.requests.map((request, i) => provider.modelOf(request, server.paths[i] ?? ''))).toEqual(
    server.requests.map(() => model),
  );
  const calls = provider.callsOf(server.requests.at(-1));
  for (const call of calls) expect(call.result, `${call.name} was not answered`).toBeDefined();
  return calls.filter((call) => !isPageState(call));
}

describe.each(PROVIDERS)('openmanus on $name (api_type = "$apiType")', (provider) => {
  it('--agent manus writes a file with str_replace_editor, then terminates', async () => {
    const workspace = await tempDir();
    const server = await standIn(provider, [
      {
        toolCalls: [
          {
            name: 'str_replace_editor',
            arguments: { command: 'create', path: join(workspace, 'hello.txt'), file_text: 'hello\n' },
          },
        ],
      },
      terminate('Wrote hello.txt.'),
    ]);
    const config = await configFor(provider, server);
    const ran = await openmanus(provider, ['--agent', 'manus', '--config', config, '--workspace', workspace, 'write']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('Wrote hello.txt.\n');
    expect(await readFile(join(workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(server.requests).toHaveLength(2);
    expect(provider.toolsOf(server.requests[0])).toEqual(expect.arrayContaining(['str_replace_editor', 'browser_use']));
    const [written] = modelCalls(provider, server);
    expect(written?.name).toBe('str_replace_editor');
    expect(written?.result).toContain('File created successfully');
  });

  it.skipIf(!chromePath())('--agent browser opens a local page with browser_use, then terminates', async () => {
    const url = await page('<html><head><title>Provider check</title></head><body><h1>Hello</h1></body></html>');
    const server = await standIn(provider, [
      { toolCalls: [{ name: 'browser_use', arguments: { action: 'go_to_url', url } }] },
      terminate('The page says Hello.'),
    ]);
    const config = await configFor(provider, server, `[browser]\nallow_hosts = ["${new URL(url).host}"]\n`);
    const ran = await openmanus(provider, [
      '--agent',
      'browser',
      '--config',
      config,
      '--workspace',
      await tempDir(),
      'look',
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('The page says Hello.\n');
    expect(provider.toolsOf(server.requests[0])).toEqual(['browser_use', 'terminate']);
    const [opened] = modelCalls(provider, server);
    expect(opened?.result).toContain(`Navigated to ${url}`);
    const state = provider.callsOf(server.requests[1]).find(isPageState);
    expect(state?.result).toContain('Title: Provider check');
  });

  it('--agent data_analysis runs python, then terminates with the answer', async () => {
    const server = await standIn(provider, [
      { toolCalls: [{ name: 'python_execute', arguments: { code: 'print(6 * 7)' } }] },
      terminate('It is 42.'),
    ]);
    const config = await configFor(provider, server);
    const args = ['--agent', 'data_analysis', '--config', config, '--workspace', await tempDir(), 'compute'];
    const ran = await openmanus(provider, args);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('It is 42.\n');
    expect(provider.toolsOf(server.requests[0])).toContain('data_visualization');
    expect(modelCalls(provider, server)[0]?.result).toContain('42');
  });

  it('--agent swe runs a bash command in the workspace, then terminates', async () => {
    const workspace = await tempDir();
    const server = await standIn(provider, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo from-swe > swe.txt && pwd' } }] },
      terminate('Done in the workspace.'),
    ]);
    const config = await configFor(provider, server);
    const ran = await openmanus(provider, ['--agent', 'swe', '--config', config, '--workspace', workspace, 'run it']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('Done in the workspace.\n');
    expect(await readFile(join(workspace, 'swe.txt'), 'utf8')).toBe('from-swe\n');
    expect(modelCalls(provider, server)[0]?.result).toContain(workspace);
  });

  it('openmanus mcp drives a local MCP server over HTTP with its token', async () => {
    const workspace = await tempDir();
    const served = await startHttpServer(['--workspace', workspace, '--sandbox', 'none']);
    closers.push(async () => {
      served.child.kill('SIGTERM');
      await served.exited;
    });
    if (!served.token) throw new Error(`no token in: ${served.stderr()}`);
    const server = await standIn(provider, [
      {
        toolCalls: [{ name: 'mcp_server_bash', arguments: { command: 'echo made-by-mcp > note.txt && cat note.txt' } }],
      },
      terminate('Wrote note.txt.'),
    ]);
    const config = await configFor(provider, server);
    const args = ['mcp', '--config', config, '-c', 'http', '--server-url', served.url, `--token=${served.token}`];
    const ran = await openmanus(provider, [...args, '-p', 'Write a note']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('Wrote note.txt.\n');
    expect(await readFile(join(workspace, 'note.txt'), 'utf8')).toBe('made-by-mcp\n');
    expect(provider.toolsOf(server.requests[0])).toEqual(expect.arrayContaining(['mcp_server_bash', 'terminate']));
    expect(modelCalls(provider, server)[0]?.result).toContain('made-by-mcp');
  });

  it('openmanus flow: the plan, a step by manus, the summary', async () => {
    const workspace = await tempDir();
    const steps = ['Write done.txt'];
    const server = await standIn(provider, [
      { toolCalls: [{ name: 'planning', arguments: { command: 'create', plan_id: 'p', title: 'One file', steps } }] },
      {
        toolCalls: [
          {
            name: 'str_replace_editor',
            arguments: { command: 'create', path: join(workspace, 'done.txt'), file_text: 'done\n' },
          },
        ],
      },
      terminate('Wrote done.txt.'),
      { content: 'The plan is done: done.txt is written.' },
    ]);
    const config = await configFor(provider, server);
    const ran = await openmanus(provider, ['flow', '--config', config, '--workspace', workspace, 'Write a file']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await readFile(join(workspace, 'done.txt'), 'utf8')).toBe('done\n');
    expect(ran.stdout).toContain('  0. [✓] Write done.txt');
    expect(ran.stdout.endsWith('Plan completed:\n\nThe plan is done: done.txt is written.\n')).toBe(true);
    expect(server.requests).toHaveLength(4);
    expect(provider.toolsOf(server.requests[0])).toEqual(['planning']);
    expect(provider.toolsOf(server.requests[1])).toContain('str_replace_editor');
    modelCalls(provider, server);
    // The step's own history: its file written, answered on this wire.
    const step = provider.callsOf(server.requests[2]).find((call) => call.name === 'str_replace_editor');
    expect(step?.result).toContain('File created successfully');
  });
});

describe('openmanus across providers', () => {
  it('[llm] on an OpenAI-compatible endpoint, [llm.manus] on Anthropic: Manus runs on Anthropic, swe on [llm]', async () => {
    const claude = await standIn(anthropic, [terminate('Manus on Claude.')]);
    const gpt = await standIn(openai, [terminate('swe on GPT.')]);
    const file = join(await tempDir(), 'config.toml');
    await writeFile(
      file,
      `[llm]\nmodel = "gpt-4o-mini"\nbase_url = "${gpt.baseURL}"\napi_key = "sk-test"\n\n` +
        `[llm.manus]\napi_type = "anthropic"\nmodel = "claude-sonnet-4-5"\nbase_url = "${claude.baseURL}"\napi_key = "sk-ant-test"\n`,
    );
    const manus = await runNode('cli.js', ['--agent', 'manus', '--config', file, '--workspace', await tempDir(), 'hi']);
    expect(manus.code, manus.stderr).toBe(0);
    expect(manus.stdout).toBe('Manus on Claude.\n');
    expect(claude.requests).toHaveLength(1);
    expect(gpt.requests).toHaveLength(0);
    modelCalls(anthropic, claude);
    const swe = await runNode('cli.js', ['--agent', 'swe', '--config', file, '--workspace', await tempDir(), 'hi']);
    expect(swe.code, swe.stderr).toBe(0);
    expect(swe.stdout).toBe('swe on GPT.\n');
    expect(gpt.requests).toHaveLength(1);
    modelCalls(openai, gpt);
  });

  it('--model anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, no config file, runs on Anthropic', async () => {
    const workspace = await tempDir();
    const server = await standIn(anthropic, [
      { toolCalls: [{ name: 'python_execute', arguments: { code: 'print("py" + "thon")' } }] },
      terminate('Python ran.'),
    ]);
    const ran = await runNode('cli.js', ['--model', 'anthropic:claude-sonnet-4-5', '--workspace', workspace, 'go'], {
      cwd: workspace,
      env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: server.baseURL },
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('Python ran.\n');
    expect(modelCalls(anthropic, server, 'claude-sonnet-4-5')[0]?.result).toContain('python');
  });
});
