import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { ToolCall } from '../src/kernel/messages.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import type { LlmCallOptions, LlmPort } from '../src/llm/llm.js';
import { err, ok } from '../src/result.js';
import { agentTool } from '../src/shell/agentTool.js';
import { run, stream } from '../src/shell/run.js';
import { compactRunItem, createRunEmitter, type RunItem } from '../src/shell/runItems.js';
import type { ScriptEntry } from '../src/testing/script.js';
import type { RecordedRequest } from '../src/testing/server.js';
import { defineTool } from '../src/tools/defineTool.js';
import { useOpenAiServers } from './servers.js';

const { serve, llmFor } = useOpenAiServers({ maxRetries: 0 });

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number(), note: z.string().optional() }),
  parallelSafe: true,
  execute: ({ a, b }) => String(a + b),
});
const makeAgent = () =>
  createAgent({
    name: 'calc',
    systemPrompt: 'You add numbers.',
    tools: [add],
    policies: defaultPolicies({ maxSteps: 10 }),
  });

const answer = 'The sums are 3 and 7, and this sentence is long enough to arrive in several pieces.';
// Arguments longer than a server chunk (16 characters): each call's arguments come in pieces.
const script = (): ScriptEntry<RecordedRequest>[] => [
  {
    content: 'Adding both at once.',
    toolCalls: [
      { id: 'call_first', name: 'add', arguments: { a: 1, b: 2, note: 'the first of two sums' } },
      { id: 'call_second', name: 'add', arguments: { a: 3, b: 4, note: 'the second of two sums' } },
    ],
    usage: { inputTokens: 11, outputTokens: 7 },
  },
  { content: answer, usage: { inputTokens: 13, outputTokens: 5 } },
];

type Delta = Extract<RunItem, { type: 'delta' }>;
const deltasOf = (items: readonly RunItem[]) => items.filter((i): i is Delta => i.type === 'delta');

async function collect(iterator: AsyncIterable<RunItem>): Promise<RunItem[]> {
  const items: RunItem[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

/** The tool calls a consumer assembles from the deltas of one model call: by index, arguments joined. */
function assemble(deltas: readonly Delta[]): ToolCall[] {
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const { toolCall } of deltas) {
    if (!toolCall) continue;
    calls[toolCall.index] ??= { id: '', name: '', arguments: '' };
    const call = calls[toolCall.index] as { id: string; name: string; arguments: string };
    if (toolCall.id) call.id = toolCall.id;
    if (toolCall.name) call.name = toolCall.name;
    call.arguments += toolCall.arguments ?? '';
  }
  return calls;
}

/** The port, recording the options of every call: whether it was asked for deltas. */
function recording(llm: LlmPort): LlmPort & { readonly calls: LlmCallOptions[] } {
  const calls: LlmCallOptions[] = [];
  return {
    model: llm.model,
    calls,
    complete: (request, options = {}) => {
      calls.push(options);
      return llm.complete(request, options);
    },
  };
}

describe('a streamed reply arrives as deltas', () => {
  it('text in pieces, in order, joined equal to the answer, between the call and its reply', async () => {
    const server = await serve(script());
    const items = await collect(stream(makeAgent(), 'add', { llm: llmFor(server, { stream: true }) }));
    const calls = items.flatMap((i) => (i.type === 'effect' && i.effect.type === 'callLlm' ? [i.effect.id] : []));
    expect(calls).toHaveLength(2);
    const last = deltasOf(items).filter((d) => d.effectId === calls[1]);
    expect(last.length).toBeGreaterThan(3);
    expect(last.map((d) => d.text).join('')).toBe(answer);
    // Each delta after its call started and before the reply was applied.
    const started = items.findIndex(
      (i) => i.type === 'effect' && i.effect.type === 'callLlm' && i.effect.id === calls[1],
    );
    const replied = items.findIndex(
      (i) => i.type === 'event' && i.event.type === 'llmResponded' && i.event.effectId === calls[1],
    );
    for (const delta of last) expect(items.indexOf(delta)).toBeGreaterThan(started);
    for (const delta of last) expect(items.indexOf(delta)).toBeLessThan(replied);
    expect(items.at(-1)).toMatchObject({ type: 'result', result: { answer } });
  });

  it('tool calls assembled from their deltas equal the reply, and the non-streamed run’s', async () => {
    const streamed = await serve(script());
    const items = await collect(stream(makeAgent(), 'add', { llm: llmFor(streamed, { stream: true }) }));
    const first = items.find((i) => i.type === 'effect' && i.effect.type === 'callLlm');
    const deltas = deltasOf(items).filter((d) => first?.type === 'effect' && d.effectId === first.effect.id);
    // Every call's arguments came in more than one piece, and its id and name once, first.
    for (const index of [0, 1]) {
      const pieces = deltas.filter((d) => d.toolCall?.index === index);
      expect(pieces.filter((d) => d.toolCall?.arguments).length).toBeGreaterThan(1);
      expect(pieces.filter((d) => d.toolCall?.id || d.toolCall?.name)).toEqual([pieces[0]]);
    }
    const replied = items.find((i) => i.type === 'event' && i.event.type === 'llmResponded');
    const toolCalls = replied?.type === 'event' && replied.event.type === 'llmResponded' ? replied.event.toolCalls : [];
    expect(toolCalls).toHaveLength(2);
    expect(assemble(deltas)).toEqual(toolCalls);
    expect(
      deltas
        .filter((d) => d.text)
        .map((d) => d.text)
        .join(''),
    ).toBe('Adding both at once.');

    const plain = await serve(script());
    const outcome = await run(makeAgent(), 'add', { llm: llmFor(plain), runId: 'same' });
    const plainCalls = outcome.state.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []));
    expect(plainCalls).toEqual(toolCalls);
    expect(toolCalls.map((c) => c.id)).toEqual(['call_first', 'call_second']);
  });

  it('the final state of a streamed run deep-equals the non-streamed run’s, usage included', async () => {
    const streamed = await serve(script());
    const plain = await serve(script());
    const emitter = createRunEmitter();
    const seen: RunItem[] = [];
    emitter.on('delta', (item) => seen.push(item));
    const a = await run(makeAgent(), 'add', { llm: llmFor(streamed, { stream: true }), runId: 'r1', emitter });
    const b = await run(makeAgent(), 'add', { llm: llmFor(plain), runId: 'r1' });
    expect(seen.length).toBeGreaterThan(10);
    expect(streamed.requests.every((r) => r.stream === true)).toBe(true);
    expect(plain.requests.some((r) => r.stream)).toBe(false);
    expect(a.state).toEqual(b.state);
    // gpt-4o-mini: 24 input tokens at $0.15 and 12 output at $0.60 per million.
    expect(a.usage).toEqual({ inputTokens: 24, outputTokens: 12, llmCalls: 2, costUsd: 0.0000108 });
    expect(a.answer).toBe(answer);
  });

  it('in the prompt tool mode the markup streams as text, and the call is parsed from the whole', async () => {
    const reply = 'Adding.\n<tool_call>{"name": "add", "arguments": {"a": 2, "b": 5}}</tool_call>';
    const server = await serve([{ content: reply }, { content: 'It is 7.' }]);
    const items = await collect(
      stream(makeAgent(), 'add', { llm: llmFor(server, { stream: true, toolMode: 'prompt' }), runId: 'p' }),
    );
    const first = items.find((i) => i.type === 'effect' && i.effect.type === 'callLlm');
    const deltas = deltasOf(items).filter((d) => first?.type === 'effect' && d.effectId === first.effect.id);
    expect(deltas.map((d) => d.text).join('')).toBe(reply);
    expect(items).toContainEqual(
      expect.objectContaining({
        type: 'event',
        event: expect.objectContaining({ type: 'llmResponded', toolCalls: [expect.objectContaining({ name: 'add' })] }),
      }),
    );
    expect(items.at(-1)).toMatchObject({ type: 'result', result: { answer: 'It is 7.' } });
  });

  it('a compact item is the delta itself', async () => {
    const server = await serve([{ content: answer }]);
    const items = await collect(stream(makeAgent(), 'hi', { llm: llmFor(server, { stream: true }) }));
    const delta = deltasOf(items)[0];
    expect(delta).toMatchObject({ type: 'delta', text: expect.any(String) });
    expect(compactRunItem(delta as RunItem)).toEqual(delta);
  });

  it('a child agent’s deltas reach the parent’s stream with their origin', async () => {
    const server = await serve([
      { toolCalls: [{ name: 'helper', arguments: { task: 'say it' } }] },
      { content: 'The child speaks at some length, in pieces.' },
      { content: 'Parent done.' },
    ]);
    const helper = agentTool(createAgent({ name: 'helper' }));
    const parent = createAgent({ name: 'parent', tools: [helper], policies: defaultPolicies({ maxSteps: 5 }) });
    const items = await collect(stream(parent, 'go', { llm: llmFor(server, { stream: true }) }));
    const child = deltasOf(items).filter((d) => d.origin);
    expect(child.map((d) => d.text).join('')).toBe('The child speaks at some length, in pieces.');
    expect(child[0]?.origin).toEqual([
      { tool: 'helper', effectId: expect.any(String), agent: 'helper', model: 'gpt-4o-mini' },
    ]);
    expect(items.at(-1)).toMatchObject({ type: 'result', result: { answer: 'Parent done.' } });
  });
});

describe('deltas cost nothing when nobody listens', () => {
  it('the port is asked for deltas only by a stream or an emitter with a delta listener', async () => {
    const server = await serve([{ content: 'one' }, { content: 'two' }, { content: 'three' }, { content: 'four' }]);
    const llm = recording(llmFor(server, { stream: true }));
    await run(makeAgent(), 'a', { llm });
    const busy = createRunEmitter();
    busy.on('event', () => undefined);
    await run(makeAgent(), 'b', { llm, emitter: busy });
    const listening = createRunEmitter();
    listening.on('delta', () => undefined);
    await run(makeAgent(), 'c', { llm, emitter: listening });
    await collect(stream(makeAgent(), 'd', { llm }));
    expect(llm.calls.map((c) => typeof c.onDelta)).toEqual(['undefined', 'undefined', 'function', 'function']);
  });

  it('nor is a child agent’s model, unless the parent’s deltas are taken', async () => {
    const script = () => [
      { toolCalls: [{ name: 'helper', arguments: { task: 'say it' } }] },
      { content: 'child' },
      { content: 'parent' },
    ];
    const parent = createAgent({
      name: 'parent',
      tools: [agentTool(createAgent({ name: 'helper' }))],
      policies: defaultPolicies({ maxSteps: 5 }),
    });
    const quiet = recording(llmFor(await serve(script()), { stream: true }));
    await run(parent, 'go', { llm: quiet });
    const read = recording(llmFor(await serve(script()), { stream: true }));
    await collect(stream(parent, 'go', { llm: read }));
    expect(quiet.calls.map((c) => typeof c.onDelta)).toEqual(['undefined', 'undefined', 'undefined']);
    expect(read.calls.map((c) => typeof c.onDelta)).toEqual(['function', 'function', 'function']);
  });
});

describe('a streamed reply that breaks', () => {
  it('a stream cut off mid-way fails the run with the reason', async () => {
    const server = await serve([{ content: answer, cutAfter: 3 }]);
    const result = await run(makeAgent(), 'hi', { llm: llmFor(server, { stream: true }) });
    expect(result).toMatchObject({ status: 'failed', finishReason: 'error' });
    expect(result.error?.message).toMatch(
      /^the model request failed: network: the connection broke during the reply: terminated/,
    );
  });

  it('a stream ended early but cleanly is no reply either', async () => {
    const server = await serve([{ content: answer, endAfter: 3 }]);
    const result = await llmFor(server, { stream: true }).complete({ messages: [], tools: [], toolChoice: 'auto' });
    expect(result).toEqual(
      err({
        kind: 'network',
        message:
          'the connection broke during the reply: the reply stream ended before the reply did (no finish_reason)',
      }),
    );
  });

  it('a retried stream says so, and the deltas after the restart are the whole answer', async () => {
    const server = await serve([{ content: 'x'.repeat(200), endAfter: 4 }, { content: answer }]);
    const deltas: object[] = [];
    const result = await llmFor(server, { stream: true, maxRetries: 1 }).complete(
      { messages: [], tools: [], toolChoice: 'auto' },
      { onDelta: (d) => deltas.push(d) },
    );
    expect(result).toMatchObject(ok({ content: answer }));
    const restart = deltas.findIndex((d) => 'restart' in d);
    expect(deltas.slice(0, restart).length).toBeGreaterThan(0);
    expect(deltas[restart]).toEqual({ restart: true });
    expect(
      deltas
        .slice(restart + 1)
        .map((d) => (d as { text: string }).text)
        .join(''),
    ).toBe(answer);
  });

  it('an abort mid-stream stops it: no more deltas, the run is cancelled', async () => {
    // 1,000 pieces, one every 200 ms: reading the whole reply would outlast the test's time-out.
    const server = await serve([{ content: 'x'.repeat(16_000), trickleMs: 200 }]);
    const controller = new AbortController();
    const emitter = createRunEmitter();
    let deltas = 0;
    emitter.on('delta', () => {
      deltas++;
      if (deltas === 2) controller.abort('enough');
    });
    const result = await run(makeAgent(), 'hi', {
      llm: llmFor(server, { stream: true }),
      emitter,
      signal: controller.signal,
    });
    expect(result).toMatchObject({ finishReason: 'cancelled', error: { code: 'CANCELLED', message: 'enough' } });
    expect(deltas).toBe(2);
  });

  it('a throwing delta listener ends the call with its error', async () => {
    const server = await serve([{ content: answer }]);
    const emitter = createRunEmitter();
    emitter.on('delta', () => {
      throw new Error('the listener broke');
    });
    const result = await run(makeAgent(), 'hi', { llm: llmFor(server, { stream: true }), emitter });
    expect(result).toMatchObject({ status: 'failed' });
    expect(result.error?.message).toBe('the model request failed: the LLM port threw: the listener broke');
  });
});
