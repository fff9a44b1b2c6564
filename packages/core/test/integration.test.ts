import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import { defaultPolicies, tokenBudget } from '../src/kernel/policies.js';
import { createStep } from '../src/kernel/reducer.js';
import type { AgentState } from '../src/kernel/state.js';
import { portComplete } from '../src/llm/llm.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { err } from '../src/result.js';
import { RunInProgressError, resume, run, stream } from '../src/shell/run.js';
import { createRunEmitter, type RunItem } from '../src/shell/runItems.js';
import type { ScriptEntry } from '../src/testing/script.js';
import type { RecordedRequest } from '../src/testing/server.js';
import { askHuman } from '../src/tools/askHuman.js';
import { defineTool } from '../src/tools/defineTool.js';
import { useOpenAiServers } from './servers.js';

const { serve, llmFor } = useOpenAiServers({ maxRetries: 2 });

function makeAgent(counters: Record<string, number> = {}) {
  const add = defineTool({
    name: 'add',
    description: 'Add two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    parallelSafe: true,
    execute: ({ a, b }) => {
      counters.add = (counters.add ?? 0) + 1;
      return String(a + b);
    },
  });
  const terminate = defineTool({
    name: 'terminate',
    description: 'Finish the task',
    parameters: z.object({ status: z.enum(['success', 'failure']) }),
    terminal: true,
    execute: ({ status }) => `The interaction has been completed with status: ${status}`,
  });
  return createAgent({
    name: 'calc',
    systemPrompt: 'You add numbers.',
    tools: [add, terminate],
    policies: defaultPolicies({ maxSteps: 10 }),
  });
}

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy',
  parameters: z.object({}),
  needsApproval: true,
  execute: () => 'deployed',
});

const toolMessages = (request: RecordedRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === 'tool');

describe('run through the openai SDK against a local server', () => {
  it('runs a multi-step task to terminate', async () => {
    const server = await serve([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { toolCalls: [{ name: 'add', arguments: { a: 3, b: 4 } }] },
      { content: 'The sums are 3 and 7.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const result = await run(makeAgent(), 'add 1+2 and 3+4', { llm: llmFor(server) });
    expect(result).toMatchObject({ status: 'finished', finishReason: 'terminated', answer: 'The sums are 3 and 7.' });
    server.assertConsumed();
    expect(server.requests[0]?.tools).toHaveLength(2);
    expect(server.requests[0]?.tool_choice).toBe('auto');
    expect(toolMessages(server.requests[1])).toEqual([
      expect.objectContaining({ content: '3', tool_call_id: 'call_0_0' }),
    ]);
    expect(toolMessages(server.requests[2]).map((m) => m.content)).toEqual(['3', '7']);
    expect(result.usage.llmCalls).toBe(3);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });

  it('waits out a 429 with Retry-After, then succeeds', async () => {
    const server = await serve([{ error: { status: 429, message: 'slow down', retryAfter: 1 } }, { content: 'done' }]);
    const started = Date.now();
    const result = await run(makeAgent(), 'hi', { llm: llmFor(server) });
    expect(result).toMatchObject({ finishReason: 'answered', answer: 'done' });
    expect(server.hits).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('fails with a precise reason once 500s exhaust the retries', async () => {
    const fail = { error: { status: 500, message: 'upstream exploded', retryAfterMs: 5 } };
    const server = await serve([fail, fail, fail, { content: 'never reached' }]);
    const result = await run(makeAgent(), 'hi', { llm: llmFor(server, { maxRetries: 2 }) });
    expect(result).toMatchObject({ status: 'failed', finishReason: 'error' });
    expect(result.error?.message).toMatch(/server \(HTTP 500\).*upstream exploded/);
    expect(server.hits).toBe(3);
  });

  it('gives up on a reply slower than the request timeout, with the reason', async () => {
    const server = await serve([{ content: 'too late', delayMs: 600_000 }]);
    const result = await run(makeAgent(), 'hi', { llm: llmFor(server, { timeoutMs: 200, maxRetries: 0 }) });
    expect(result).toMatchObject({ status: 'failed', finishReason: 'error' });
    expect(result.error?.message).toMatch(/^the model request failed: timeout: /);
  });

  it('does not retry what will fail again (400, 401)', async () => {
    const server = await serve([
      {
        error: {
          status: 400,
          message: "This model's maximum context length is 8192 tokens",
          code: 'context_length_exceeded',
        },
      },
    ]);
    const result = await run(makeAgent(), 'hi', { llm: llmFor(server) });
    expect(result.error?.message).toMatch(/^the model request failed: context_length \(HTTP 400\)/);
    expect(server.hits).toBe(1);
    const auth = await serve([{ error: { status: 401, message: 'bad key' } }]);
    expect((await run(makeAgent(), 'hi', { llm: llmFor(auth) })).error?.message).toMatch(/auth \(HTTP 401\)/);
    expect(auth.hits).toBe(1);
  });

  it('a malformed argument string becomes an observation and the model recovers', async () => {
    const server = await serve([
      { toolCalls: [{ name: 'add', arguments: '{"a": 1, "b":' }] },
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 'two' } }] },
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { content: '3' },
    ]);
    const result = await run(makeAgent(), 'add', { llm: llmFor(server) });
    expect(result.answer).toBe('3');
    expect(toolMessages(server.requests[1])[0]?.content).toMatch(/^Error: the arguments for add are not valid JSON/);
    expect(toolMessages(server.requests[2])[1]?.content).toMatch(/^Error: invalid arguments for add:\n.*b/s);
  });

  it('accepts tool arguments sent as an object by a non-conformant server', async () => {
    const server = await serve([
      { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 }, objectArguments: true }] },
      { content: 'five' },
    ]);
    const result = await run(makeAgent(), 'add', { llm: llmFor(server) });
    expect(result.answer).toBe('five');
    expect(toolMessages(server.requests[1])[0]?.content).toBe('5');
  });

  it('cancels an in-flight request and records what was used', async () => {
    const server = await serve([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] },
      // Ten minutes: waiting for it would fail the test at its own time-out.
      { content: 'late', delayMs: 600_000 },
    ]);
    const controller = new AbortController();
    const emitter = createRunEmitter();
    emitter.on('effect', (item) => {
      if (item.effect.type === 'callLlm' && item.effect.id === 'llm-2')
        setTimeout(() => controller.abort('user pressed Ctrl+C'), 50);
    });
    const result = await run(makeAgent(), 'add', { llm: llmFor(server), signal: controller.signal, emitter });
    expect(result).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'user pressed Ctrl+C' },
    });
    expect(result.usage.llmCalls).toBe(1);
  });

  it('stops before sending a request over the token budget', async () => {
    const server = await serve([{ content: 'never' }]);
    const agent = makeAgent();
    const policies = [...defaultPolicies({ maxSteps: 10 }), tokenBudget({ maxInputTokens: 20 })];
    const tight = { ...agent, policies, step: createStep(policies) };
    const result = await run(tight, 'a long task description '.repeat(20), { llm: llmFor(server) });
    expect(result.finishReason).toBe('token_limit');
    expect(result.answer).toMatch(/more than the limit of 20/);
    expect(server.hits).toBe(0);
  });

  it('resumes after a crash from the last checkpoint without repeating a step', async () => {
    const script: ScriptEntry<RecordedRequest>[] = [1, 2, 3, 4, 5].map((i) => ({
      toolCalls: [{ name: 'add', arguments: { a: i, b: i } }],
    }));
    script.push({ content: 'all added' });
    const server = await serve(script);
    const counters: Record<string, number> = {};
    let saved = '';
    const crashing = run(makeAgent(counters), 'add pairs', {
      llm: llmFor(server),
      checkpoint: (state) => {
        saved = JSON.stringify(state);
        if (state.step === 3 && state.status === 'awaiting_llm') throw new Error('process killed');
      },
    });
    // A checkpoint that cannot be written ends the run at once, as failed, with the reason.
    expect(await crashing).toMatchObject({
      status: 'failed',
      error: { code: 'CHECKPOINT_FAILED', message: 'could not save a checkpoint: process killed' },
    });
    expect(server.hits).toBe(2);
    const restored = JSON.parse(saved) as AgentState;
    const result = await resume(makeAgent(counters), restored, { llm: llmFor(server) });
    expect(result).toMatchObject({ finishReason: 'answered', answer: 'all added' });
    server.assertConsumed();
    expect(server.hits).toBe(6);
    expect(counters.add).toBe(5);
    const seen = server.requests.map((r) => toolMessages(r).length);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('sends reasoning models max_completion_tokens and no temperature', async () => {
    const server = await serve([{ content: 'a' }, { content: 'b' }]);
    await run(makeAgent(), 'hi', { llm: llmFor(server, { model: 'o3-mini', maxTokens: 100, temperature: 0.2 }) });
    await run(makeAgent(), 'hi', { llm: llmFor(server, { model: 'llama3', maxTokens: 100, temperature: 0.2 }) });
    expect(server.requests[0]).toMatchObject({ max_completion_tokens: 100 });
    expect(server.requests[0]?.temperature).toBeUndefined();
    expect(server.requests[1]).toMatchObject({ max_tokens: 100, temperature: 0.2 });
  });

  it('talks to Azure OpenAI through its deployment URL and api-version', async () => {
    const server = await serve([{ content: 'from azure' }]);
    const llm = createOpenAiLlm({
      apiType: 'azure',
      model: 'gpt-4o',
      apiKey: 'az-key',
      apiVersion: '2024-10-21',
      baseURL: server.baseURL.replace(/\/v1$/, ''),
    });
    const result = await run(makeAgent(), 'hi', { llm });
    expect(result.answer).toBe('from azure');
    expect(server.paths[0]).toBe('/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
  });

  it('reads a streamed reply, tool call deltas and usage included', async () => {
    const server = await serve([
      {
        content: 'Adding now, in a long enough sentence to be split.',
        toolCalls: [{ name: 'add', arguments: { a: 20, b: 22 } }],
      },
      { content: 'It is 42.' },
    ]);
    const result = await run(makeAgent(), 'add', { llm: llmFor(server, { stream: true }) });
    expect(result.answer).toBe('It is 42.');
    expect(server.requests[0]?.stream).toBe(true);
    expect(toolMessages(server.requests[1])[0]?.content).toBe('42');
    expect(result.usage.outputTokens).toBeGreaterThan(0);
  });

  it('reads a slow stream whose chunks keep coming: the idle timer is reset by each chunk', async () => {
    const server = await serve([{ content: 'x'.repeat(960), trickleMs: 50 }]);
    // About 64 chunks 50 ms apart: over 3 s in all, more than the idle limit, but never quiet that long.
    const llm = llmFor(server, { stream: true, idleTimeoutMs: 2_000, timeoutMs: 30_000 });
    const result = await run(makeAgent(), 'hi', { llm });
    expect(result).toMatchObject({ finishReason: 'answered', answer: 'x'.repeat(960) });
  });

  it('calls tools through the prompt for models without function calling', async () => {
    const server = await serve([
      { content: 'I will add.\n<tool_call>{"name": "add", "arguments": {"a": 2, "b": 5}}</tool_call>' },
      { content: 'The answer is 7.' },
    ]);
    const result = await run(makeAgent(), 'add 2 and 5', { llm: llmFor(server, { toolMode: 'prompt' }) });
    expect(result.answer).toBe('The answer is 7.');
    expect(server.requests[0]?.tools).toBeUndefined();
    expect(String(server.requests[0]?.messages[0]?.content)).toMatch(/<tool_call>/);
    expect(server.requests[1]?.messages.at(-1)?.content).toMatch(/<tool_result name="add">\n7\n<\/tool_result>/);
  });
});

describe('tools in the interpreter', () => {
  it('runs parallel-safe calls concurrently, up to the cap', async () => {
    let running = 0;
    let peak = 0;
    const slow = defineTool({
      name: 'slow',
      description: 'Takes a while',
      parameters: z.object({ n: z.number() }),
      parallelSafe: true,
      execute: async ({ n }) => {
        peak = Math.max(peak, ++running);
        await new Promise((r) => setTimeout(r, 30));
        running--;
        return `done ${n}`;
      },
    });
    const agent = createAgent({ name: 'p', tools: [slow] });
    const calls = [1, 2, 3, 4, 5].map((n) => ({ name: 'slow', arguments: { n } }));
    const server = await serve([
      { toolCalls: calls },
      { toolCalls: calls.map((c, i) => ({ ...c, arguments: { n: i + 10 } })) },
      { content: 'ok' },
    ]);
    await run(agent, 'go', { llm: llmFor(server), maxParallelTools: 5 });
    expect(peak).toBe(5);
    peak = 0;
    const capped = await serve([{ toolCalls: calls }, { content: 'ok' }]);
    await run(agent, 'go', { llm: llmFor(capped), maxParallelTools: 2 });
    expect(peak).toBe(2);
    expect(toolMessages(capped.requests[1]).map((m) => m.content)).toEqual([
      'done 1',
      'done 2',
      'done 3',
      'done 4',
      'done 5',
    ]);
  });

  it("gives tools the run's model, for tools that call it themselves", async () => {
    const summarise = defineTool({
      name: 'summarise',
      description: 'Summarise a text with the model',
      parameters: z.object({ text: z.string() }),
      execute: async ({ text }, { llm, signal }) => {
        if (!llm) return 'no model';
        const reply = await llm.complete(
          { messages: [{ role: 'user', content: `Summarise: ${text}` }], tools: [], toolChoice: 'none' },
          { signal },
        );
        return reply.isOk() ? reply.value.content : `failed: ${reply.error.message}`;
      },
    });
    const server = await serve([
      { toolCalls: [{ name: 'summarise', arguments: { text: 'a long story' } }] },
      { content: 'A story.' },
      { content: 'Done: a story.' },
    ]);
    const result = await run(createAgent({ name: 's', tools: [summarise] }), 'summarise it', { llm: llmFor(server) });
    expect(result.answer).toBe('Done: a story.');
    expect(server.requests[1]?.messages).toEqual([{ role: 'user', content: 'Summarise: a long story' }]);
    expect(toolMessages(server.requests[2])[0]?.content).toBe('A story.');
    // The tool's own model call counts in the run's usage.
    expect(result.usage.llmCalls).toBe(3);
  });

  it('turns a hung tool, a throwing tool and an Err result into observations', async () => {
    const hang = defineTool({
      name: 'hang',
      description: 'Never returns',
      parameters: z.object({}),
      timeoutMs: 50,
      execute: () => new Promise<string>(() => {}),
    });
    const boom = defineTool({
      name: 'boom',
      description: 'Throws',
      parameters: z.object({}),
      execute: () => {
        throw new Error('disk on fire');
      },
    });
    const refuse = defineTool({
      name: 'refuse',
      description: 'Returns an Err',
      parameters: z.object({}),
      execute: () => err('not allowed here'),
    });
    const agent = createAgent({ name: 't', tools: [hang, boom, refuse] });
    const server = await serve([
      { toolCalls: [{ name: 'hang' }, { name: 'boom' }, { name: 'refuse' }] },
      { content: 'ok' },
    ]);
    await run(agent, 'go', { llm: llmFor(server) });
    expect(toolMessages(server.requests[1]).map((m) => m.content)).toEqual([
      'Error: hang timed out after 50 ms and was stopped.',
      'Error: boom failed: disk on fire',
      'Error: not allowed here',
    ]);
  });

  it('sends tool images to vision models in a follow-up user message, and none to others', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const shot = defineTool({
      name: 'shot',
      description: 'Screenshot',
      parameters: z.object({}),
      execute: () => ({ output: 'page shown', image: { base64: png, mimeType: 'image/png' } }),
    });
    const agent = createAgent({ name: 'v', tools: [shot] });
    const vision = await serve([{ toolCalls: [{ name: 'shot' }] }, { content: 'seen' }]);
    await run(agent, 'look', { llm: llmFor(vision, { vision: true }) });
    const sent = vision.requests[1]?.messages ?? [];
    expect(sent.at(-2)?.role).toBe('tool');
    expect(sent.at(-2)?.content).toBe('page shown');
    expect(sent.at(-1)).toMatchObject({
      role: 'user',
      content: [{ type: 'text' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }],
    });
    const blind = await serve([{ toolCalls: [{ name: 'shot' }] }, { content: 'seen' }]);
    await run(agent, 'look', { llm: llmFor(blind) });
    expect(JSON.stringify(blind.requests[1])).not.toContain(png);
  });

  it('pauses for a person when no handler is given, and continues from the saved state', async () => {
    const agent = createAgent({ name: 'h', tools: [askHuman] });
    const server = await serve([
      { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which city?' } }] },
      { content: 'Kyoto it is' },
    ]);
    const paused = await run(agent, 'plan a trip', { llm: llmFor(server) });
    expect(paused.status).toBe('awaiting_human');
    const { resumeWith } = await import('../src/index.js');
    expect(paused.pending).toEqual([
      expect.objectContaining({ kind: 'human', question: 'Which city?', effectId: 'human-1-0' }),
    ]);
    const saved = JSON.parse(JSON.stringify(paused.state)) as AgentState;
    const done = await resumeWith(
      agent,
      saved,
      { type: 'humanReplied', effectId: 'human-1-0', answer: 'Kyoto' },
      { llm: llmFor(server) },
    );
    expect(done.answer).toBe('Kyoto it is');
    expect(toolMessages(server.requests[1])[0]?.content).toBe('Kyoto');
  });

  it('asks the approval callback and respects a denial', async () => {
    const agent = createAgent({ name: 'a', tools: [deploy] });
    const server = await serve([{ toolCalls: [{ name: 'deploy' }] }, { content: 'ok' }]);
    const asked: string[] = [];
    await run(agent, 'ship', {
      llm: llmFor(server),
      onApproval: (call) => {
        asked.push(call.name);
        return { approved: false, reason: 'freeze' };
      },
    });
    expect(asked).toEqual(['deploy']);
    expect(toolMessages(server.requests[1])[0]?.content).toBe('Error: the user did not approve this call: freeze');
  });
});

describe('hosts that throw', () => {
  it('a throwing LLM port fails the run with the reason; throwing callbacks become answers', async () => {
    const broken = { model: 'x', complete: portComplete(() => Promise.reject(new Error('socket exploded'))) };
    const result = await run(makeAgent(), 'hi', { llm: broken });
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'LLM_PORT_THREW', message: 'the model request failed: the LLM port threw: socket exploded' },
    });

    const agent = createAgent({ name: 'h', tools: [askHuman, deploy] });
    const server = await serve([
      { toolCalls: [{ name: 'ask_human', arguments: { inquire: '?' } }, { name: 'deploy' }] },
      { content: 'ok' },
    ]);
    const done = await run(agent, 'go', {
      llm: llmFor(server),
      onHuman: () => {
        throw new Error('no terminal');
      },
      onApproval: () => {
        throw new Error('policy service down');
      },
    });
    expect(done.answer).toBe('ok');
    expect(toolMessages(server.requests[1]).map((m) => m.content)).toEqual([
      '(The question could not be asked: no terminal)',
      'Error: the user did not approve this call: the approval check failed: policy service down',
    ]);
  });
});

describe('streaming, events and lifecycle', () => {
  it('stream() yields the same items the emitter gets, ending with the result', async () => {
    const server = await serve([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }, { content: '2' }]);
    const emitter = createRunEmitter();
    const emitted: string[] = [];
    for (const type of ['effect', 'event', 'observation', 'result'] as const)
      emitter.on(type, () => emitted.push(type));
    const items: RunItem[] = [];
    for await (const item of stream(makeAgent(), 'add', { llm: llmFor(server), emitter })) items.push(item);
    expect(items.map((i) => i.type)).toEqual(emitted);
    expect(items.at(-1)).toMatchObject({ type: 'result', result: { answer: '2' } });
    expect(items.filter((i) => i.type === 'effect').map((i) => (i.type === 'effect' ? i.effect.type : ''))).toEqual([
      'callLlm',
      'callTool',
      'callLlm',
    ]);
    expect(JSON.stringify(items)).not.toContain('sk-test');
  });

  it('refuses a second concurrent run of the same state', async () => {
    const server = await serve([{ content: 'slow', delayMs: 200 }]);
    const agent = makeAgent();
    const first = run(agent, 'a', { llm: llmFor(server) });
    const { state } = await new Promise<{ state: AgentState }>((resolve) => {
      const emitter = createRunEmitter();
      emitter.on('event', (item) => resolve({ state: item.state }));
      void run(agent, 'b', { llm: llmFor(server), emitter }).catch(() => {});
    });
    await expect(resume(agent, state, { llm: llmFor(server) })).rejects.toThrow(RunInProgressError);
    await first;
  });

  it('continues a finished conversation with a new message', async () => {
    const server = await serve([{ content: 'Hello!' }, { content: 'You said hi before.' }]);
    const agent = makeAgent();
    const first = await run(agent, 'hi', { llm: llmFor(server) });
    const second = await run(agent, 'what did I say?', { llm: llmFor(server), state: first.state });
    expect(second.answer).toBe('You said hi before.');
    expect(server.requests[1]?.messages.map((m) => m.content)).toEqual([
      'You add numbers.',
      'hi',
      'Hello!',
      'what did I say?',
    ]);
  });
});
