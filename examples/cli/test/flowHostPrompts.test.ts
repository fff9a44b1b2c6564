// `openmanus flow`'s answers for its executors' runs: an MCP server's question for the person
// (elicitation) and its request for the model (sampling), asked on a terminal (a stdin marked as
// one) with the plan out of the way, and declined and refused without one. A real planning flow
// whose executor has the tool of a real MCP server over HTTP on 127.0.0.1.
import { PassThrough } from 'node:stream';
import { createAgent, defineTool, terminate } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { createPlanningFlow, runFlow } from '@openmanus/flow';
import { createMcpServer, type McpAgent, type McpToolServer, withMcp } from '@openmanus/mcp';
import { afterEach, describe, expect, it } from 'vitest';
import { flowHost } from '../src/flowCommand.js';
import { createLiveView } from '../src/liveView.js';
import type { SessionIo } from '../src/session.js';

let server: McpToolServer | undefined;
let booker: McpAgent | undefined;
afterEach(async () => {
  await booker?.close();
  await server?.close();
  booker = undefined;
  server = undefined;
});

/** A flow of one step, its executor with the `book` tool of an MCP server that asks how many and samples a note. */
async function bookingFlow() {
  server = createMcpServer([
    defineTool({
      name: 'book',
      description: 'Books a table, asking how many.',
      parameters: { type: 'object', properties: {} },
      execute: async (_, scope) => {
        const form = await scope.elicit({
          message: 'How many?',
          schema: { type: 'object', properties: { people: { type: 'integer' } }, required: ['people'] },
        });
        const note = await scope
          .sample({ messages: [{ role: 'user', content: { type: 'text', text: 'A note, please.' } }], maxTokens: 20 })
          .then(
            (answer) => answer.content.text,
            () => 'none',
          );
        return `form: ${form.action}${form.action === 'accept' ? ` ${form.content.people}` : ''}; note: ${note}`;
      },
    }),
  ]);
  const served = await server.serveHttp({ port: 0 });
  booker = withMcp(createAgent({ name: 'booker', description: 'books tables', tools: [terminate] }), {
    shop: { type: 'http', url: served.url, headers: { authorization: `Bearer ${served.token}` } },
  });
  return createPlanningFlow({ agents: { booker } });
}

/** The model: the plan, the executor's call of the tool, a note if asked for one, the step's end, the summary. */
const model = (sampled: boolean) =>
  scriptedLlm([
    {
      toolCalls: [
        { name: 'planning', arguments: { command: 'create', plan_id: 'p', title: 'Dinner', steps: ['Book'] } },
      ],
    },
    { toolCalls: [{ name: 'mcp_shop_book', arguments: {} }] },
    ...(sampled ? [{ content: 'By the window.' }] : []),
    { content: 'Booked.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    { content: 'Dinner is booked.' },
  ]);

/** A session whose person types each answer once its prompt is shown (`answers`, by the prompt's end). */
function terminal(tty: boolean, answers: Readonly<Record<string, string>> = {}) {
  const stdin = Object.assign(new PassThrough(), { isTTY: tty });
  let shown = '';
  const stderr = new PassThrough();
  stderr.on('data', (chunk: Buffer) => {
    shown += chunk.toString();
    // Typed once the prompt is out, as a person would: not within the write that shows it.
    for (const [prompt, typed] of Object.entries(answers))
      if (shown.endsWith(prompt)) setImmediate(() => stdin.write(`${typed}\n`));
  });
  const io: SessionIo = { stdin, stdout: new PassThrough(), stderr, env: {} };
  const view = createLiveView({ out: io.stdout, log: io.stderr, redraw: false, sharedScreen: false });
  return { io, view, stderr: () => shown };
}

const toolResult = (llm: ReturnType<typeof model>) =>
  JSON.stringify(llm.requests.flatMap((request) => request.messages).find((message) => message.role === 'tool'));

describe("openmanus flow: an MCP server's question and request for the model", () => {
  it('on a terminal, are asked there and answered', async () => {
    const flow = await bookingFlow();
    const llm = model(true);
    const { io, view, stderr } = terminal(true, { '(integer) > ': '3', 'Allow it? [y/N] ': 'y' });
    const outcome = await runFlow(flow, 'Book dinner', { llm, ...flowHost(io, view) });
    expect(outcome.finishReason).toBe('completed');
    expect(toolResult(llm)).toContain('form: accept 3; note: By the window.');
    expect(stderr()).toContain('mcp_shop_book asks:\nHow many?\n');
    expect(stderr()).toContain('mcp_shop_book asks to use your model (at most 20 tokens, 1 message)');
    llm.assertConsumed();
  });

  it('without a terminal, the question is declined and the request refused, each with a note', async () => {
    const flow = await bookingFlow();
    const llm = model(false);
    const { io, view, stderr } = terminal(false);
    const outcome = await runFlow(flow, 'Book dinner', { llm, ...flowHost(io, view) });
    expect(outcome.finishReason).toBe('completed');
    expect(toolResult(llm)).toContain('form: decline; note: none');
    expect(stderr()).toContain(
      'openmanus flow: declined the question of mcp_shop_book: How many? (not attached to a terminal)\n',
    );
    expect(stderr()).toContain(
      'openmanus flow: refused mcp_shop_book the use of the model (not attached to a terminal)\n',
    );
    llm.assertConsumed();
  });
});
