// A tool's questions for the person (MCP elicitation) and requests for the model (sampling) on the
// CLI's terminal: the prompts driven with fake streams (a stdin marked as a terminal), the lines of
// a call's progress and log, and the built `openmanus mcp` end to end without a terminal, against
// a server of ours whose tool asks, samples, reports progress and logs.
import { PassThrough } from 'node:stream';
import { createAgent, defineTool, type ElicitationRequest, ok, type RunItem, terminate } from '@openmanus/core';
import { createMcpServer, type McpToolServer } from '@openmanus/mcp';
import { afterEach, describe, expect, it } from 'vitest';
import { terminalHostCallbacks } from '../src/hostPrompts.js';
import { mcpCommand } from '../src/mcpCommand.js';
import { createProgress } from '../src/progress.js';
import type { SessionIo } from '../src/session.js';
import { dist, runNode, scriptedModels } from './helpers.js';

const endpoint = scriptedModels();
const call = { id: 'call-1', name: 'mcp_server_book', arguments: '{}' };

/** A session whose stdin is `typed` (marked as a terminal unless `tty` is false); stderr is kept. */
function terminal(typed: string, tty = true) {
  const stdin = Object.assign(new PassThrough(), { isTTY: tty });
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  stdin.end(typed);
  const io: SessionIo = { stdin, stdout: new PassThrough(), stderr, env: {} };
  return { callbacks: terminalHostCallbacks(io, 'openmanus mcp'), stderr: () => text };
}

const booking: ElicitationRequest = {
  message: 'Book a table?\u001b]0;pwned\u0007',
  schema: {
    type: 'object',
    properties: {
      people: { type: 'integer', title: 'Guests', description: 'How many of you', minimum: 1 },
      time: { type: 'string', default: '19:00' },
      room: {
        type: 'string',
        oneOf: [
          { const: 'in', title: 'Inside' },
          { const: 'out', title: 'Terrace' },
        ],
      },
      highChair: { type: 'boolean' },
      extras: { type: 'array', items: { type: 'string', enum: ['cake', 'candles', 'flowers'] } },
      note: { type: 'string', maxLength: 5 },
    },
    required: ['people', 'room'],
  },
};

describe('a form on the terminal', () => {
  it('asks each field with its title, description, choices and default, and asks again until it fits', async () => {
    const { callbacks, stderr } = terminal(
      ['', '0', 'two', '3', '', 'terrace', 'maybe', 'yes', 'cake, 2', ''].join('\n').concat('\n'),
    );
    expect(await callbacks.onElicitation(booking, call)).toEqual({
      action: 'accept',
      content: { people: 3, time: '19:00', room: 'out', highChair: true, extras: ['cake', 'candles'] },
    });
    const shown = stderr();
    expect(shown).toContain('mcp_server_book asks:\nBook a table?\\x1b]0;pwned\\x07\n');
    expect(shown).toContain('Guests (required) — How many of you\n(integer, at least 1) > ');
    expect(shown).toContain('  This field is required.\n');
    expect(shown).toContain('  must be at least 1.\n');
    expect(shown).toContain('  must be a number.\n');
    expect(shown).toContain('time\n[19:00] > ');
    expect(shown).toContain('room (required)\n  1) Inside (in)\n  2) Terrace (out)\n> ');
    expect(shown).toContain('  must be true or false.\n');
    expect(shown).toContain('extras\n  1) cake\n  2) candles\n  3) flowers\n(one or more, separated by commas) > ');
    expect(shown).not.toContain('\u001b');
  });

  it('"decline" declines it, and the end of the input (Ctrl+D) cancels it', async () => {
    expect(await terminal('2\nDecline\n').callbacks.onElicitation(booking, call)).toEqual({ action: 'decline' });
    expect(await terminal('2\n').callbacks.onElicitation(booking, call)).toEqual({ action: 'cancel' });
  });

  it('without a terminal, is declined with a note, and nothing is read', async () => {
    const { callbacks, stderr } = terminal('3\n', false);
    expect(await callbacks.onElicitation(booking, call)).toEqual({ action: 'decline' });
    expect(stderr()).toBe(
      'openmanus mcp: declined the question of mcp_server_book: Book a table?\\x1b]0;pwned\\x07 (not attached to a terminal)\n',
    );
  });
});

describe('a URL to open on the terminal', () => {
  const signIn: ElicitationRequest = {
    mode: 'url',
    message: 'Sign in to the calendar.\u001b[2J',
    url: 'https://calendar.example/authorize?state=\u001b]8;;x',
    elicitationId: 'e-1',
    server: 'calendar',
  };

  it("prints it as the server's, with its site, never opens it, and accepts only on y", async () => {
    const yes = terminal('y\n');
    expect(await yes.callbacks.onElicitation(signIn, call)).toEqual({ action: 'accept', content: {} });
    const shown = yes.stderr();
    expect(shown).toContain('mcp_server_book asks you to open a link of the MCP server "calendar":\n');
    expect(shown).toContain('Sign in to the calendar.\\x1b[2J\n');
    expect(shown).toContain('  (site: calendar.example)\n');
    expect(shown).toContain(
      'It is not opened for you: open it in your browser only if you trust it.\nOpened it and done? [y/N] ',
    );
    expect(shown).not.toContain('\u001b');
    expect(await terminal('\n').callbacks.onElicitation(signIn, call)).toEqual({ action: 'decline' });
    expect(await terminal('').callbacks.onElicitation(signIn, call)).toEqual({ action: 'cancel' });
  });

  it('without a terminal, is declined with a note naming the link', async () => {
    const { callbacks, stderr } = terminal('y\n', false);
    expect(await callbacks.onElicitation(signIn, call)).toEqual({ action: 'decline' });
    expect(stderr()).toBe(
      'openmanus mcp: declined the question of mcp_server_book: Sign in to the calendar.\\x1b[2J (a link to https://calendar.example/authorize?state=\\x1b]8;;x) (not attached to a terminal)\n',
    );
  });
});

describe('a request for the model on the terminal', () => {
  const request = {
    systemPrompt: 'You write short notes.',
    messages: [
      { role: 'user' as const, content: { type: 'text' as const, text: 'First.' } },
      {
        role: 'user' as const,
        content: { type: 'text' as const, text: `A note for table 4\u001b[2J ${'x'.repeat(500)}` },
      },
    ],
    maxTokens: 50,
  };

  it('shows the system prompt and the last message, shortened, and is allowed only on y', async () => {
    const yes = terminal('y\n');
    expect(await yes.callbacks.onSampling(request, call)).toBe(true);
    const shown = yes.stderr();
    expect(shown).toContain('mcp_server_book asks to use your model (at most 50 tokens, 2 messages):\n');
    expect(shown).toContain('  system: You write short notes.\n');
    expect(shown).toMatch(/ {2}user: A note for table 4\\x1b\[2J x+…\nAllow it\? \[y\/N\] /);
    expect(shown).not.toContain('First.');
    expect(await terminal('\n').callbacks.onSampling(request, call)).toEqual({
      approved: false,
      reason: 'the person said no',
    });
    expect(await terminal('').callbacks.onSampling(request, call)).toEqual({
      approved: false,
      reason: 'the person said no',
    });
  });

  it('names the tools the model may ask the server to run, and shows tool calls and results in the last message', async () => {
    const { callbacks, stderr } = terminal('y\n');
    const withTools = {
      messages: [
        {
          role: 'user' as const,
          content: [
            { type: 'tool_result' as const, toolUseId: 'u1', content: [{ type: 'text' as const, text: 'Sunny' }] },
          ],
        },
      ],
      maxTokens: 50,
      tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }],
    };
    expect(await callbacks.onSampling(withTools, call)).toBe(true);
    expect(stderr()).toContain(
      '  user: [the result of a tool call: Sunny]\n  tools the model may ask for (the server runs them, not you): get_weather\n',
    );
  });

  it('without a terminal, is refused with a note', async () => {
    const { callbacks, stderr } = terminal('y\n', false);
    expect(await callbacks.onSampling(request, call)).toEqual({
      approved: false,
      reason: 'no one is at a terminal to approve it',
    });
    expect(stderr()).toBe('openmanus mcp: refused mcp_server_book the use of the model (not attached to a terminal)\n');
  });
});

describe('openmanus mcp --interactive on a terminal', () => {
  it("reads a run's form through the session's own reader: the answer is not taken for the next task", async () => {
    const { server, env } = await endpoint([{ toolCalls: [{ name: 'book', arguments: {} }] }, { content: 'Booked.' }]);
    const book = defineTool({
      name: 'book',
      description: 'Books a table.',
      parameters: { type: 'object', properties: {} },
      execute: async (_, scope) => {
        const form = await scope.elicit({
          message: 'How many?',
          schema: { type: 'object', properties: { people: { type: 'integer' } }, required: ['people'] },
        });
        return form.action === 'accept' ? `Booked for ${form.content.people}.` : form.action;
      },
    });
    const connect = async () =>
      ok({ agent: createAgent({ name: 'mcp', tools: [book, terminate] }), close: async () => {} });
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    stdin.end('Book a table\n3\nexit\n');
    const io: SessionIo = { stdin, stdout: new PassThrough(), stderr: new PassThrough(), env };
    expect(await mcpCommand(['--interactive'], io, { cliScript: dist('cli.js'), connect })).toBe(0);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.messages.at(-1)).toMatchObject({ role: 'tool', content: 'Booked for 3.' });
  });
});

describe("a call's progress and log lines", () => {
  it('are short lines of the live progress', () => {
    const lines: string[] = [];
    const show = createProgress({ write: (line) => lines.push(line), color: false });
    const item = (rest: object) => ({ effectId: 'e1', tool: 'mcp_server_book', ...rest }) as RunItem;
    show(item({ type: 'progress', progress: 2, total: 5, message: 'checking\ntables' }));
    show(item({ type: 'progress', progress: 7 }));
    show(item({ type: 'log', level: 'warning', logger: 'db', data: { slow: true } }));
    show(item({ type: 'log', level: 'info', data: `line\u001b[31m ${'y'.repeat(200)}` }));
    expect(lines).toEqual([
      '  ⋯ mcp_server_book 2/5 checking tables',
      '  ⋯ mcp_server_book 7',
      '  [warning] db: {"slow":true}',
      // At most 120 characters, the escape shown.
      `  [info] ${`line\\x1b[31m ${'y'.repeat(200)}`.slice(0, 119)}…`,
    ]);
  });
});

describe('openmanus mcp without a terminal', () => {
  let server: McpToolServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("declines a server's question and refuses its sampling, with notes, and shows its progress and log", async () => {
    server = createMcpServer([
      defineTool({
        name: 'book',
        description: 'Books a table, asking for the details.',
        parameters: { type: 'object', properties: {} },
        execute: async (_, scope) => {
          scope.reportProgress({ progress: 1, total: 2, message: 'looking for a table' });
          scope.log('notice', 'table 4 is free', 'bookings');
          const form = await scope.elicit(booking);
          const note = await scope.sample(request()).then(
            (answer) => answer.content.text,
            (error: Error) => `no note (${error.message})`,
          );
          return `Form: ${form.action}. ${note}`;
        },
      }),
    ]);
    const served = await server.serveHttp({ port: 0 });
    const { server: model, env } = await endpoint([
      { toolCalls: [{ name: 'mcp_server_book', arguments: {} }] },
      { content: 'Not booked.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const ran = await runNode(
      'cli.js',
      ['mcp', '-c', 'http', '--server-url', served.url, `--token=${served.token}`, '-p', 'Book a table'],
      { env },
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('Not booked.\n');
    expect(ran.stderr).toContain('  ⋯ mcp_server_book 1/2 looking for a table\n');
    expect(ran.stderr).toContain('  [notice] bookings: table 4 is free\n');
    expect(ran.stderr).toContain(
      'openmanus mcp: declined the question of mcp_server_book: Book a table?\\x1b]0;pwned\\x07 (not attached to a terminal)\n',
    );
    expect(ran.stderr).toContain(
      'openmanus mcp: refused mcp_server_book the use of the model (not attached to a terminal)\n',
    );
    const toolMessage = model.requests[1]?.messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(toolMessage?.content)).toContain('Form: decline. no note (');
  });
});

const request = () => ({
  messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'A note, please.' } }],
  maxTokens: 20,
});
