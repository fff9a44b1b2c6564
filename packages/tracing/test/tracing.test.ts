import {
  type Agent,
  agentTool,
  createAgent,
  createOpenAiLlm,
  createRunEmitter,
  defaultPolicies,
  defineTool,
  type RunItem,
  run,
  stream,
  terminalTools,
  terminate,
} from '@openmanus/core';
import { type OpenAiServer, type RecordedRequest, startOpenAiServer } from '@openmanus/core/testing';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VERSION } from '../src/version.js';
import { withTracing } from '../src/withTracing.js';
import { collector } from './collector.js';

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MODEL = 'scripted-model';
const llmFor = (s: OpenAiServer, model = MODEL) =>
  createOpenAiLlm({ model, apiKey: 'test-key', baseURL: s.baseURL, maxRetries: 0 });

const TASK = 'What is the population of Kyoto?';
const SECRET_OUTPUT = 'Kyoto has 1,463,723 inhabitants';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a city up.',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => {
    if (city === 'Atlantis') throw new Error('no such city: Atlantis');
    return SECRET_OUTPUT;
  },
});

const helper = createAgent({
  name: 'helper',
  description: 'Answers questions about cities',
  systemPrompt: 'You are the helper.',
  tools: [lookup, terminate],
  policies: defaultPolicies({ maxSteps: 5 }),
  tokenizer: 'estimate',
});

const call = (name: string, args: object, id?: string) => ({ name, arguments: args, ...(id ? { id } : {}) });
const finish = (content: string) => ({ content, toolCalls: [call('terminate', { status: 'success' })] });

/** Every attribute value of every span, as text (to look for content that must not be there). */
const allAttributeText = (spans: readonly ReadableSpan[]) =>
  spans.map((s) => JSON.stringify(s.attributes) + (s.status.message ?? '')).join('\n');

describe('withTracing: a run as spans', () => {
  it('gives the run, each step, each model call and each tool call a span with the GenAI attributes', async () => {
    server = await startOpenAiServer({
      script: [
        { toolCalls: [call('lookup', { city: 'Kyoto' }, 'call_a')], usage: { inputTokens: 120, outputTokens: 7 } },
        { ...finish('About 1.46 million.'), usage: { inputTokens: 180, outputTokens: 12 } },
      ],
    });
    const spans = collector();
    const tracer = spans.provider.getTracer('test');
    const outcome = await run(helper, TASK, withTracing(helper, { llm: llmFor(server), runId: 'run-1' }, { tracer }));

    expect(outcome.status).toBe('finished');
    expect(spans.tree()).toBe(
      [
        'invoke_agent helper',
        '  openmanus.step',
        `    chat ${MODEL}`,
        '    execute_tool lookup',
        '  openmanus.step',
        `    chat ${MODEL}`,
        '    execute_tool terminate',
      ].join('\n'),
    );
    const root = spans.one('invoke_agent helper');
    expect(root.kind).toBe(SpanKind.INTERNAL);
    expect(root.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.agent.name': 'helper',
      'gen_ai.agent.description': 'Answers questions about cities',
      'gen_ai.request.model': MODEL,
      'gen_ai.conversation.id': 'run-1',
      'openmanus.run.id': 'run-1',
      'openmanus.run.status': 'finished',
      'openmanus.run.finish_reason': 'terminated',
      // The run's usage is the server's, summed.
      'gen_ai.usage.input_tokens': 300,
      'gen_ai.usage.output_tokens': 19,
      'openmanus.usage.llm_calls': 2,
    });
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
    expect(spans.byName('openmanus.step').map((s) => s.attributes)).toEqual([
      { 'openmanus.step.number': 1, 'openmanus.step.max': 5 },
      { 'openmanus.step.number': 2, 'openmanus.step.max': 5 },
    ]);
    const chats = spans.byName(`chat ${MODEL}`);
    expect(chats.map((s) => s.kind)).toEqual([SpanKind.CLIENT, SpanKind.CLIENT]);
    expect(chats.map((s) => s.attributes)).toEqual([
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': MODEL,
        'openmanus.effect.id': 'llm-1',
        'gen_ai.response.finish_reasons': ['tool_call'],
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 7,
      },
      expect.objectContaining({
        'gen_ai.response.finish_reasons': ['tool_call'],
        'gen_ai.usage.input_tokens': 180,
        'gen_ai.usage.output_tokens': 12,
      }),
    ]);
    expect(spans.one('execute_tool lookup').attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call_a',
      'gen_ai.tool.type': 'function',
      'openmanus.effect.id': expect.any(String),
    });
    // One trace; every span ended, none in error.
    expect(new Set(spans.finished().map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(spans.started.every((s) => s.ended)).toBe(true);
    expect(spans.finished().every((s) => s.status.code === SpanStatusCode.UNSET)).toBe(true);
  });

  it('records no prompt, reply or tool text unless captureContent is on, and records them when it is', async () => {
    const script = () => [{ toolCalls: [call('lookup', { city: 'Kyoto' }, 'call_a')] }, finish('About 1.46 million.')];
    server = await startOpenAiServer({ script: [...script(), ...script()] });
    const quiet = collector();
    await run(helper, TASK, withTracing(helper, { llm: llmFor(server) }, { tracer: quiet.provider.getTracer('t') }));
    const text = allAttributeText(quiet.finished());
    for (const content of [TASK, 'You are the helper.', SECRET_OUTPUT, 'About 1.46 million.', 'Kyoto"'])
      expect(text).not.toContain(content);

    const loud = collector();
    const tracer = loud.provider.getTracer('t');
    await run(helper, TASK, withTracing(helper, { llm: llmFor(server) }, { tracer, captureContent: true }));
    const root = loud.one('invoke_agent helper');
    expect(JSON.parse(String(root.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: TASK }] },
    ]);
    expect(JSON.parse(String(root.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'About 1.46 million.' }], finish_reason: 'stop' },
    ]);
    const [first, second] = loud.byName(`chat ${MODEL}`);
    expect(JSON.parse(String(first?.attributes['gen_ai.system_instructions']))).toEqual([
      { type: 'text', content: 'You are the helper.' },
    ]);
    expect(JSON.parse(String(first?.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_a', name: 'lookup', arguments: { city: 'Kyoto' } }],
        finish_reason: 'tool_call',
      },
    ]);
    // The second request carries the history: the task, the call and its result.
    const history = JSON.parse(String(second?.attributes['gen_ai.input.messages'])) as { role: string }[];
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(history[2]).toEqual({
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: 'call_a', response: SECRET_OUTPUT }],
    });
    expect(loud.one('execute_tool lookup').attributes).toMatchObject({
      'gen_ai.tool.call.arguments': '{"city":"Kyoto"}',
      'gen_ai.tool.call.result': SECRET_OUTPUT,
    });
  });

  it('a failing tool call is an error span, and the run goes on', async () => {
    for (const captureContent of [false, true]) {
      const spans = collector();
      server = await startOpenAiServer({
        script: [{ toolCalls: [call('lookup', { city: 'Atlantis' })] }, finish('No such city.')],
      });
      const tracer = spans.provider.getTracer('t');
      const outcome = await run(helper, TASK, withTracing(helper, { llm: llmFor(server) }, { tracer, captureContent }));
      await server.close();
      server = undefined;

      expect(outcome.status).toBe('finished');
      const failed = spans.one('execute_tool lookup');
      expect(failed.status.code).toBe(SpanStatusCode.ERROR);
      expect(failed.attributes['error.type']).toBe('tool_error');
      // The error text is what the model reads: only recorded with content.
      if (captureContent) expect(failed.status.message).toContain('no such city: Atlantis');
      else expect(failed.status.message).toBeUndefined();
      expect(spans.one('execute_tool terminate').status.code).toBe(SpanStatusCode.UNSET);
      expect(spans.one('invoke_agent helper').status.code).toBe(SpanStatusCode.UNSET);
    }
  });

  it('a failing model call is an error span with the port’s message, and so is the run it ended', async () => {
    server = await startOpenAiServer({ script: [{ error: { status: 400, message: 'the prompt is malformed' } }] });
    const spans = collector();
    const tracer = spans.provider.getTracer('t');
    const outcome = await run(helper, TASK, withTracing(helper, { llm: llmFor(server) }, { tracer }));

    expect(outcome.status).toBe('failed');
    const chat = spans.one(`chat ${MODEL}`);
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    expect(chat.status.message).toMatch(/^bad_request \(HTTP 400\): .*the prompt is malformed/);
    expect(chat.attributes['error.type']).toBe('LLM_BAD_REQUEST');
    const root = spans.one('invoke_agent helper');
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: outcome.error?.message });
    expect(root.attributes).toMatchObject({
      'error.type': 'LLM_BAD_REQUEST',
      'openmanus.run.status': 'failed',
      'openmanus.run.finish_reason': 'error',
    });
  });
});

const RESEARCHER_PROMPT = 'You are the researcher.';
const researcher = createAgent({
  name: 'Researcher',
  systemPrompt: RESEARCHER_PROMPT,
  tools: [lookup],
  tokenizer: 'estimate',
});
const boss = createAgent({
  name: 'boss',
  systemPrompt: 'You are the boss.',
  tools: [agentTool(researcher, { name: 'research' }), terminate],
  tokenizer: 'estimate',
});
const isResearcher = (request: RecordedRequest) => JSON.stringify(request.messages[0]).includes(RESEARCHER_PROMPT);
const turnOf = (request: RecordedRequest) => request.messages.filter((m) => m.role === 'assistant').length;

describe('withTracing: child agents', () => {
  it('a child agent run by agentTool is an invoke_agent span under its tool call, on its own model', async () => {
    server = await startOpenAiServer({
      script: (request) =>
        isResearcher(request)
          ? turnOf(request) === 0
            ? { toolCalls: [call('lookup', { city: 'Kyoto' })], usage: { inputTokens: 50, outputTokens: 5 } }
            : { content: 'Kyoto: 1.46 million.', usage: { inputTokens: 70, outputTokens: 6 } }
          : turnOf(request) === 0
            ? {
                toolCalls: [call('research', { task: 'Find Kyoto’s population' })],
                usage: { inputTokens: 10, outputTokens: 1 },
              }
            : { ...finish('1.46 million.'), usage: { inputTokens: 20, outputTokens: 2 } },
    });
    const spans = collector();
    const tracer = spans.provider.getTracer('t');
    const childModel = 'research-model';
    const tool = agentTool(researcher, { name: 'research', llm: llmFor(server, childModel) });
    const parent = createAgent({ ...boss.config, tools: [tool, terminate] });
    const outcome = await run(parent, TASK, withTracing(parent, { llm: llmFor(server) }, { tracer }));

    expect(outcome.status).toBe('finished');
    expect(spans.tree()).toBe(
      [
        'invoke_agent boss',
        '  openmanus.step',
        `    chat ${MODEL}`,
        '    execute_tool research',
        '      invoke_agent Researcher',
        '        openmanus.step',
        `          chat ${childModel}`,
        '          execute_tool lookup',
        '        openmanus.step',
        `          chat ${childModel}`,
        '  openmanus.step',
        `    chat ${MODEL}`,
        '    execute_tool terminate',
      ].join('\n'),
    );
    const child = spans.one('invoke_agent Researcher');
    expect(child.attributes).toMatchObject({
      'gen_ai.agent.name': 'Researcher',
      'gen_ai.request.model': childModel,
      'openmanus.run.id': `${outcome.runId}/${spans.one('execute_tool research').attributes['openmanus.effect.id']}`,
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 11,
    });
    // The parent's usage counts the child's.
    expect(spans.one('invoke_agent boss').attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 150,
      'gen_ai.usage.output_tokens': 14,
      'openmanus.usage.llm_calls': 4,
    });
  });

  it('a run cancelled while a child agent waits for its model ends every span, the open calls marked cancelled', async () => {
    server = await startOpenAiServer({
      script: (request) =>
        isResearcher(request)
          ? { content: 'too late', delayMs: 10_000 }
          : { toolCalls: [call('research', { task: 'Find Kyoto’s population' })] },
    });
    const spans = collector();
    const tracer = spans.provider.getTracer('t');
    const cancel = new AbortController();
    const emitter = createRunEmitter();
    // Cancel once the child's model call has started.
    emitter.on('effect', (item) => {
      if (item.origin && item.effect.type === 'callLlm') cancel.abort();
    });
    const outcome = await run(
      boss,
      TASK,
      withTracing(boss, { llm: llmFor(server), signal: cancel.signal, emitter }, { tracer }),
    );

    expect(outcome.finishReason).toBe('cancelled');
    expect(spans.started.length).toBeGreaterThanOrEqual(7);
    expect(spans.started.filter((s) => !s.ended).map((s) => s.name)).toEqual([]);
    expect(spans.tree()).toBe(
      [
        'invoke_agent boss',
        '  openmanus.step',
        `    chat ${MODEL}`,
        '    execute_tool research',
        '      invoke_agent Researcher',
        '        openmanus.step',
        `          chat ${MODEL}`,
      ].join('\n'),
    );
    const cut = spans.byName(`chat ${MODEL}`)[1];
    expect(cut?.status.code).toBe(SpanStatusCode.ERROR);
    expect(cut?.attributes['error.type']).toBe('cancelled');
    expect(spans.one('execute_tool research').attributes['error.type']).toBe('cancelled');
    expect(spans.one('invoke_agent boss').attributes['openmanus.run.finish_reason']).toBe('cancelled');
  });
});

describe('withTracing: in a host', () => {
  it('parallel runs each get their own trace, with no span of one in the other', async () => {
    // Each reply waits a little, so the two runs interleave.
    server = await startOpenAiServer({
      script: (request) =>
        turnOf(request) === 0
          ? { toolCalls: [call('lookup', { city: 'Kyoto' })], delayMs: 20 }
          : { ...finish('done'), delayMs: 20 },
    });
    const spans = collector();
    const tracer = spans.provider.getTracer('t');
    const llm = llmFor(server);
    const ids = ['run-a', 'run-b', 'run-c'];
    await Promise.all(ids.map((runId) => run(helper, TASK, withTracing(helper, { llm, runId }, { tracer }))));

    const roots = spans.byName('invoke_agent helper');
    expect(roots.map((r) => r.attributes['openmanus.run.id']).sort()).toEqual(ids);
    expect(new Set(roots.map((r) => r.spanContext().traceId)).size).toBe(3);
    for (const root of roots) {
      expect(spans.tree(root).split('\n')).toHaveLength(7);
      const inTrace = spans.finished().filter((s) => s.spanContext().traceId === root.spanContext().traceId);
      expect(inTrace).toHaveLength(7);
    }
  });

  it('stream is traced too, and the host’s own emitter still gets every item', async () => {
    const script = () => [{ toolCalls: [call('lookup', { city: 'Kyoto' })] }, finish('done')];
    server = await startOpenAiServer({ script: [...script(), ...script()] });
    const counted = async (options: { emitter?: ReturnType<typeof createRunEmitter> }, agent: Agent) => {
      const seen: RunItem['type'][] = [];
      const emitter = createRunEmitter();
      for (const type of ['effect', 'event', 'observation', 'result'] as const)
        emitter.on(type, () => void seen.push(type));
      const streamed: RunItem[] = [];
      for await (const item of stream(agent, TASK, { ...options, llm: llmFor(server as OpenAiServer), emitter }))
        streamed.push(item);
      return { seen, streamed };
    };
    const plain = await counted({}, helper);

    const spans = collector();
    const seen: RunItem['type'][] = [];
    const host = createRunEmitter();
    for (const type of ['effect', 'event', 'observation', 'result'] as const) host.on(type, () => void seen.push(type));
    const options = withTracing(
      helper,
      { llm: llmFor(server), emitter: host },
      { tracer: spans.provider.getTracer('t') },
    );
    const streamed: RunItem[] = [];
    for await (const item of stream(helper, TASK, options)) streamed.push(item);

    expect(seen).toEqual(plain.seen);
    expect(streamed.map((i) => i.type)).toEqual(plain.streamed.map((i) => i.type));
    expect(spans.tree().split('\n')).toHaveLength(7);
  });

  it('without a tracer it uses the global API: nothing without a provider, the host’s provider once registered', async () => {
    const script = () => [finish('done')];
    server = await startOpenAiServer({ script: [...script(), ...script()] });
    const spans = collector();
    await run(helper, TASK, withTracing(helper, { llm: llmFor(server) }));
    expect(spans.finished()).toEqual([]);

    trace.setGlobalTracerProvider(spans.provider);
    try {
      await run(helper, TASK, withTracing(helper, { llm: llmFor(server) }));
    } finally {
      trace.disable();
    }
    const root = spans.one('invoke_agent helper');
    expect(root.instrumentationScope).toEqual({ name: '@openmanus/tracing', version: VERSION });
  });
});

describe('withTracing: an agent without a step limit', () => {
  it('gives its steps their number and no maximum', async () => {
    server = await startOpenAiServer({ script: [finish('Done.')] });
    const spans = collector();
    const unlimited = createAgent({ name: 'free', tools: [terminate], policies: [terminalTools()] });
    const options = withTracing(unlimited, { llm: llmFor(server) }, { tracer: spans.provider.getTracer('test') });
    expect((await run(unlimited, TASK, options)).finishReason).toBe('terminated');
    expect(spans.byName('openmanus.step').map((s) => s.attributes)).toEqual([{ 'openmanus.step.number': 1 }]);
  });
});
