import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createAgent,
  createFileStore,
  createOpenAiLlm,
  createStrReplaceEditor,
  defaultPolicies,
  defineTool,
  InvalidStateError,
  terminate,
} from '@openmanus/core';
import { type OpenAiServer, type RecordedRequest, scriptedLlm, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FlowState } from '../src/flowState.js';
import { createPlanningFlow, type PlanningFlowOptions } from '../src/planningFlow.js';
import { renderPlan } from '../src/plans.js';
import { type FlowItem, resumeFlow, runFlow, streamFlow } from '../src/runFlow.js';

let server: OpenAiServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

type Script = Parameters<typeof startOpenAiServer>[0]['script'];
async function model(script: Script) {
  server = await startOpenAiServer({ script });
  return createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
}
async function workspace() {
  const dir = await mkdtemp(join(tmpdir(), 'flow-'));
  dirs.push(dir);
  return dir;
}

const plan = (steps: readonly string[], title = 'Trip notes') => ({
  toolCalls: [{ name: 'planning', arguments: { command: 'create', plan_id: 'mine', title, steps } }],
});
const finish = (status: 'success' | 'failure', content = '') => ({
  content,
  toolCalls: [{ name: 'terminate', arguments: { status } }],
});
const write = (path: string, text: string) => ({
  toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'create', path, file_text: text } }],
});

const systemOf = (request: RecordedRequest | undefined) => String(request?.messages[0]?.content ?? '');
const lastUserOf = (request: RecordedRequest | undefined) =>
  String(request?.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
const toolNames = (request: RecordedRequest | undefined) =>
  (request?.tools ?? []).map((t) => (t as { function: { name: string } }).function.name).sort();

/** A writer with the file editor, and a checker with only terminate: two executors with different tools. */
function agents(dir: string) {
  const writer = createAgent({
    name: 'Writer',
    description: 'writes files in the workspace',
    systemPrompt: 'You are the writer.',
    tools: [createStrReplaceEditor({ workspace: dir }), terminate],
    policies: defaultPolicies({ maxSteps: 4 }),
  });
  const checker = createAgent({
    name: 'Checker',
    description: 'checks what was written',
    systemPrompt: 'You are the checker.',
    tools: [terminate],
    policies: defaultPolicies({ maxSteps: 3 }),
  });
  return { writer, checker };
}
const flowOf = (dir: string, options: Omit<PlanningFlowOptions, 'agents'> = {}) =>
  createPlanningFlow({ agents: agents(dir), ...options });

async function collect(items: AsyncIterable<FlowItem>) {
  const all: FlowItem[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('a planning flow through the local OpenAI-compatible server', () => {
  it('plans, routes each step to the executor its label names, and sums up', async () => {
    const dir = await workspace();
    const notes = join(dir, 'notes.md');
    const llm = await model([
      plan(['[WRITER] Write the notes', '[checker] Check the notes']),
      write(notes, '# Kyoto\n'),
      finish('success', 'Wrote notes.md.'),
      { content: 'The notes look right.' },
      { content: 'Notes written and checked.', usage: { inputTokens: 7, outputTokens: 3 } },
    ]);
    const items = await collect(streamFlow(flowOf(dir), 'Write trip notes and check them', { llm, flowId: 'f1' }));
    const result = items.at(-1);
    if (result?.type !== 'result') throw new Error('the last item is not the result');
    const outcome = result.result;

    expect(outcome).toMatchObject({ status: 'finished', finishReason: 'completed', flowId: 'f1' });
    expect(outcome.answer).toBe('Plan completed:\n\nNotes written and checked.');
    expect(outcome.results).toEqual(['Wrote notes.md.', 'The notes look right.']);
    expect(outcome.plan.steps.map((s) => s.status)).toEqual(['completed', 'completed']);
    expect(await readFile(notes, 'utf8')).toBe('# Kyoto\n');

    const requests = server?.requests ?? [];
    // The plan: the planning tool forced, both agents listed for labels.
    expect(toolNames(requests[0])).toEqual(['planning']);
    expect(requests[0]?.tool_choice).toBe('required');
    expect(systemOf(requests[0])).toContain(
      '- WRITER: writes files in the workspace\n- CHECKER: checks what was written',
    );
    // Step 0 went to the writer, step 1 to the checker (the label's case does not matter).
    expect(systemOf(requests[1])).toBe('You are the writer.');
    expect(toolNames(requests[1])).toEqual(['str_replace_editor', 'terminate']);
    expect(lastUserOf(requests[1])).toContain('Your task now is step 0: "[WRITER] Write the notes"');
    expect(lastUserOf(requests[1])).toContain('0. [→] [WRITER] Write the notes\n1. [ ] [checker] Check the notes');
    expect(systemOf(requests[3])).toBe('You are the checker.');
    expect(lastUserOf(requests[3])).toContain('0. [✓] [WRITER] Write the notes\n1. [→] [checker] Check the notes');
    // The summary: no tools, the final plan and what each step reported.
    expect(requests[4]?.tools).toBeUndefined();
    expect(lastUserOf(requests[4])).toContain('1. [✓] [checker] Check the notes');
    expect(lastUserOf(requests[4])).toContain('--- 1 ---\nWrote notes.md.');
    server?.assertConsumed();

    // Both levels stream: the flow's events and each executor's items, tagged with their step.
    const agentItems = items.filter((i) => i.type === 'agent');
    expect(new Set(agentItems.map((i) => `${i.executor}:${i.stepIndex}`))).toEqual(new Set(['writer:0', 'checker:1']));
    expect(items.filter((i) => i.type === 'event').map((i) => i.event.type)).toEqual([
      'started',
      'llmResponded',
      'agentFinished',
      'agentFinished',
      'llmResponded',
    ]);
    // Usage: the flow's two calls and the executors' three, counted once each.
    expect(outcome.usage.llmCalls).toBe(5);
  });

  it("falls back to OpenManus's default plan when the plan call is malformed, and says why", async () => {
    const dir = await workspace();
    const llm = await model([
      { toolCalls: [{ name: 'planning', arguments: '{"command": "create", "title": ' }] },
      finish('success', 'Analysed.'),
      finish('success', 'Executed.'),
      finish('success', 'Verified.'),
      { content: 'Done.' },
    ]);
    const items = await collect(streamFlow(flowOf(dir), 'Tidy the workspace', { llm }));
    const outcome = (items.at(-1) as Extract<FlowItem, { type: 'result' }>).result;
    expect(items.find((i) => i.type === 'observation')).toEqual({
      type: 'observation',
      observation: { kind: 'planFallback', reason: expect.stringContaining('not JSON') },
    });
    expect(outcome.plan.title).toBe('Plan for: Tidy the workspace');
    expect(outcome.plan.steps.map((s) => [s.text, s.status])).toEqual([
      ['Analyze request', 'completed'],
      ['Execute task', 'completed'],
      ['Verify results', 'completed'],
    ]);
    expect(outcome.results).toEqual(['Analysed.', 'Executed.', 'Verified.']);
  });

  it('falls back to the default plan when the model plans no steps', async () => {
    const dir = await workspace();
    const task = 'Summarise the three attached reports into a single page for the board meeting';
    const llm = await model([
      plan([]),
      finish('success', 'a'),
      finish('success', 'b'),
      finish('success', 'c'),
      { content: 'ok' },
    ]);
    const items = await collect(streamFlow(flowOf(dir), task, { llm }));
    const outcome = (items.at(-1) as Extract<FlowItem, { type: 'result' }>).result;
    expect(items.some((i) => i.type === 'observation' && i.observation.kind === 'planFallback')).toBe(true);
    expect(outcome.plan.title).toBe(`Plan for: ${task.slice(0, 50)}...`);
    expect(outcome.finishReason).toBe('completed');
  });

  it('ends with the reason when no plan can be made (the model fails)', async () => {
    const dir = await workspace();
    const llm = await model([{ error: { status: 400, message: 'bad request' } }]);
    const outcome = await runFlow(flowOf(dir), 'Anything', { llm });
    expect(outcome).toMatchObject({
      status: 'failed',
      finishReason: 'error',
      error: { code: 'LLM_BAD_REQUEST', status: 400 },
    });
    expect(outcome.error?.message).toMatch(/^could not make a plan: .*400/);
  });

  it('runs a step again when its executor fails midway, and completes it on the second attempt', async () => {
    const dir = await workspace();
    const notes = join(dir, 'notes.md');
    const llm = await model([
      plan(['[WRITER] Write the notes']),
      write(notes, 'draft\n'),
      // The model fails in the middle of the step: the run ends failed.
      { error: { status: 500, message: 'upstream exploded' } },
      finish('success', 'Notes written.'),
      { content: 'Done.' },
    ]);
    const items = await collect(streamFlow(flowOf(dir), 'Write notes', { llm }));
    const outcome = (items.at(-1) as Extract<FlowItem, { type: 'result' }>).result;
    const retried = items.find((i) => i.type === 'observation' && i.observation.kind === 'stepRetried');
    expect(retried).toMatchObject({ observation: { index: 0, attempt: 2, reason: expect.stringContaining('500') } });
    expect(outcome.plan.steps[0]?.status).toBe('completed');
    // The second attempt is told what went wrong, and (memory kept) sees its first attempt's work.
    const second = server?.requests[3];
    expect(lastUserOf(second)).toContain('An earlier attempt at this step failed');
    expect(JSON.stringify(second?.messages)).toContain('draft');
  });

  it('blocks a step whose executor gives up, and with whenBlocked "stop" stops the flow there', async () => {
    const dir = await workspace();
    const llm = await model([
      plan(['[WRITER] Book the hotel', '[CHECKER] Confirm the booking']),
      finish('failure', 'No hotel has rooms on those dates.'),
    ]);
    const outcome = await runFlow(flowOf(dir, { whenBlocked: 'stop' }), 'Book a hotel', { llm });
    expect(outcome).toMatchObject({ status: 'finished', finishReason: 'stopped' });
    expect(outcome.error?.message).toBe(
      'step 0 ("[WRITER] Book the hotel") is blocked: No hotel has rooms on those dates.',
    );
    expect(outcome.plan.steps).toEqual([
      { text: '[WRITER] Book the hotel', status: 'blocked', notes: 'No hotel has rooms on those dates.' },
      { text: '[CHECKER] Confirm the booking', status: 'not_started', notes: '' },
    ]);
    expect(renderPlan(outcome.plan)).toContain('0. [!] [WRITER] Book the hotel\n   Notes: No hotel has rooms');
    server?.assertConsumed();
  });

  it('replans after a blocked step: the new step runs, the blocked one stays blocked', async () => {
    const dir = await workspace();
    const llm = await model([
      plan(['[WRITER] Book the hotel', '[CHECKER] Confirm the booking']),
      finish('failure', 'No hotel has rooms.'),
      {
        toolCalls: [
          {
            name: 'planning',
            arguments: {
              command: 'update',
              plan_id: 'mine',
              steps: ['[WRITER] Book the hotel', '[WRITER] Book a guesthouse', '[CHECKER] Confirm the booking'],
            },
          },
        ],
      },
      finish('success', 'Booked the Kamogawa guesthouse.'),
      finish('success', 'Confirmed.'),
      { content: 'A guesthouse instead of a hotel.' },
    ]);
    const items = await collect(streamFlow(flowOf(dir, { whenBlocked: 'replan' }), 'Book a room', { llm }));
    const outcome = (items.at(-1) as Extract<FlowItem, { type: 'result' }>).result;
    expect(outcome.finishReason).toBe('completed');
    expect(outcome.plan.steps.map((s) => s.status)).toEqual(['blocked', 'completed', 'completed']);
    const replan = server?.requests[2];
    expect(toolNames(replan)).toEqual(['planning']);
    expect(lastUserOf(replan)).toContain('Step 0 could not be done: No hotel has rooms.');
    expect(outcome.state.replans).toBe(1);
    expect(outcome.results[0]).toBe('Step 0 blocked: No hotel has rooms.');
  });

  it("stops at the flow timeout in the middle of a step, aborting the step's tool", async () => {
    let aborted: () => void = () => {};
    const toolAborted = new Promise<void>((resolve) => (aborted = resolve));
    const wait = defineTool({
      name: 'wait_for_rain',
      description: 'Waits.',
      parameters: z.object({}),
      execute: (_args, scope) =>
        new Promise<string>((resolve) =>
          scope.signal.addEventListener('abort', () => {
            aborted();
            resolve('stopped');
          }),
        ),
    });
    const waiter = createAgent({ name: 'Waiter', tools: [wait, terminate] });
    const llm = await model([plan(['Wait for rain']), { toolCalls: [{ name: 'wait_for_rain', arguments: {} }] }]);
    // Room for the plan and the step's first request on a loaded machine: the tool then waits.
    const flow = createPlanningFlow({ agents: { waiter }, timeoutMs: 5_000 });
    const outcome = await runFlow(flow, 'Wait', { llm });
    await toolAborted;
    expect(outcome).toMatchObject({
      status: 'finished',
      finishReason: 'timeout',
      error: { code: 'FLOW_TIMEOUT', message: 'the flow ran out of time (5 s)' },
    });
    expect(outcome.plan.steps[0]?.status).toBe('in_progress');
    expect(server?.requests).toHaveLength(2);
  });

  it('counts its time limit from `startedAt` when given: a flow resumed past it ends as timed out at once', async () => {
    const waiter = createAgent({ name: 'Waiter', tools: [terminate] });
    const llm = await model([plan(['Wait for rain'])]);
    const flow = createPlanningFlow({ agents: { waiter }, timeoutMs: 60_000 });
    const outcome = await runFlow(flow, 'Wait', { llm, startedAt: Date.now() - 61_000 });
    expect(outcome).toMatchObject({
      finishReason: 'timeout',
      error: { code: 'FLOW_TIMEOUT', message: 'the flow ran out of time (60 s)' },
    });
    expect(outcome.plan.steps.every((s) => s.status !== 'completed')).toBe(true);
  });

  it('is cancelled by its signal in the middle of a step; leaving its stream early cancels it too', async () => {
    const stop = new AbortController();
    const slow = defineTool({
      name: 'slow',
      description: 'Takes its time.',
      parameters: z.object({}),
      execute: (_args, scope) => {
        stop.abort(new Error('the user pressed Ctrl-C'));
        return new Promise<string>((resolve) => scope.signal.addEventListener('abort', () => resolve('stopped')));
      },
    });
    const worker = createAgent({ name: 'Worker', tools: [slow, terminate] });
    const llm = await model([plan(['Work slowly', 'Rest']), { toolCalls: [{ name: 'slow', arguments: {} }] }]);
    const flow = createPlanningFlow({ agents: { worker } });
    const outcome = await runFlow(flow, 'Work', { llm, signal: stop.signal });
    expect(outcome).toMatchObject({
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'the user pressed Ctrl-C' },
    });
    expect(outcome.plan.steps.map((s) => s.status)).toEqual(['in_progress', 'not_started']);
    expect(server?.requests).toHaveLength(2);

    await server?.close();
    const again = await model([plan(['Work slowly']), { toolCalls: [{ name: 'slow', arguments: {} }] }]);
    const items = streamFlow(createPlanningFlow({ agents: { worker } }), 'Work', { llm: again });
    for await (const item of items) if (item.type === 'agent') break;
    expect(server?.requests.length).toBeLessThanOrEqual(2);
  });
  it("gives an executor its own model when `llms` names one, the others the flow's", async () => {
    const dir = await workspace();
    const llm = await model([
      plan(['[WRITER] Write', '[CHECKER] Check']),
      finish('success', 'Written.'),
      { content: 'ok' },
    ]);
    const checkerModel = scriptedLlm([finish('success', 'Checked by the second model.')]);
    const outcome = await runFlow(flowOf(dir), 'Write and check', { llm, llms: { checker: checkerModel } });
    expect(outcome.results).toEqual(['Written.', 'Checked by the second model.']);
    expect(systemOf(server?.requests[1])).toBe('You are the writer.');
    expect(checkerModel.requests).toHaveLength(1);
    expect(checkerModel.requests[0]?.messages[0]).toEqual({ role: 'system', content: 'You are the checker.' });
    server?.assertConsumed();
  });
});

describe('streaming', () => {
  it("streams the executors' model replies as delta items when the flow's items are read, and only then", async () => {
    const dir = await workspace();
    server = await startOpenAiServer({
      script: [plan(['[WRITER] Write']), { content: 'Written in pieces.' }, { content: 'Summary.' }],
    });
    const llm = createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0, stream: true });
    const items = await collect(streamFlow(flowOf(dir), 'Write', { llm }));
    const deltas = items.filter((i) => i.type === 'agent' && i.item.type === 'delta');
    expect(deltas.map((i) => (i.type === 'agent' && i.item.type === 'delta' ? (i.item.text ?? '') : '')).join('')).toBe(
      'Written in pieces.',
    );
    expect(deltas.every((i) => i.type === 'agent' && i.executor === 'writer' && i.stepIndex === 0)).toBe(true);
    const outcome = (items.at(-1) as Extract<FlowItem, { type: 'result' }>).result;
    expect(outcome.results).toEqual(['Written in pieces.']);
  });
});

describe('checkpoints and resume', () => {
  it('resumes a flow saved between steps, in a new flow object, with the executor remembering its earlier step', async () => {
    const dir = await workspace();
    const store = createFileStore<FlowState>(join(dir, 'flows'));
    const notes = join(dir, 'notes.md');
    const replies = [
      plan(['[WRITER] Write the notes', '[WRITER] Add a title']),
      write(notes, 'Gion at dusk\n'),
      finish('success', 'Wrote the notes.'),
    ];
    const llm = await model(replies);
    const first = await runFlow(flowOf(dir), 'Write notes', {
      llm,
      store,
      flowId: 'trip',
      // The process "dies" as soon as step 1 has been handed to its executor.
      checkpoint: (state) => {
        if (state.current?.index === 1) throw new Error('killed');
      },
    });
    expect(first.status).toBe('failed');
    const saved = (await store.load('trip'))?.state;
    expect(saved?.status).toBe('running');
    expect(saved?.plans.plans[saved.planId]?.steps.map((s) => s.status)).toEqual(['completed', 'in_progress']);

    await server?.close();
    const later = await model([finish('success', 'Added a title.'), { content: 'Notes with a title.' }]);
    const outcome = await resumeFlow(flowOf(dir), 'trip', { llm: later, store });
    expect(outcome).toMatchObject({ finishReason: 'completed', answer: 'Plan completed:\n\nNotes with a title.' });
    expect(outcome.results).toEqual(['Wrote the notes.', 'Added a title.']);
    // The writer's second step carries its first step's conversation (its memory was saved in the flow).
    const step1 = server?.requests[0];
    expect(JSON.stringify(step1?.messages)).toContain('Gion at dusk');
    expect(lastUserOf(step1)).toContain('Your task now is step 1');
    expect((await store.load('trip'))?.state.status).toBe('finished');
  });

  it('with executorMemory "clear", each step starts from an empty history', async () => {
    const dir = await workspace();
    const llm = await model([
      plan(['[WRITER] First', '[WRITER] Second']),
      finish('success', 'Result ONE'),
      finish('success', 'Result TWO'),
      { content: 'ok' },
    ]);
    await runFlow(flowOf(dir, { executorMemory: 'clear' }), 'Two steps', { llm });
    const second = server?.requests[2];
    expect(second?.messages.filter((m) => m.role === 'user')).toHaveLength(1);
    expect(JSON.stringify(second?.messages)).not.toContain('Result ONE');
  });

  it('refuses a damaged or newer saved flow with the field named, before anything is sent', async () => {
    const dir = await workspace();
    const llm = await model([]);
    const flow = flowOf(dir);
    await expect(
      resumeFlow(flow, { kind: 'planningFlow', schemaVersion: 1, status: 'sleeping' }, { llm }),
    ).rejects.toThrow(InvalidStateError);
    await expect(
      resumeFlow(flow, { kind: 'planningFlow', schemaVersion: 1, status: 'sleeping' }, { llm }),
    ).rejects.toThrow(/status/);
    await expect(resumeFlow(flow, { kind: 'planningFlow', schemaVersion: 9 }, { llm })).rejects.toThrow(/newer/);
    expect(server?.requests).toHaveLength(0);
  });

  it('will not start a flow under an id the store already holds', async () => {
    const dir = await workspace();
    const store = createFileStore<FlowState>(join(dir, 'flows'));
    const llm = await model([plan(['[WRITER] Only']), finish('success', 'x'), { content: 'y' }]);
    await runFlow(flowOf(dir), 'Once', { llm, store, flowId: 'once' });
    await expect(runFlow(flowOf(dir), 'Twice', { llm, store, flowId: 'once' })).rejects.toThrow(/resumeFlow/);
  });
});

describe("the host's callbacks", () => {
  it("reach the executors' tools: a form for the person (elicitation) and a request for the model (sampling)", async () => {
    const book = defineTool({
      name: 'book',
      description: 'Books a table, asking how many and for a note from the model.',
      parameters: z.object({}),
      execute: async (_, scope) => {
        const form = await scope.elicit({
          message: 'How many?',
          schema: { type: 'object', properties: { people: { type: 'integer' } }, required: ['people'] },
        });
        const note = await scope.sample({
          messages: [{ role: 'user', content: { type: 'text', text: 'A note for the booking.' } }],
          maxTokens: 20,
        });
        return `${form.action} ${form.action === 'accept' ? form.content.people : ''}; note: ${note.content.text}`;
      },
    });
    const booker = createAgent({
      name: 'Booker',
      description: 'books tables',
      tools: [book, terminate],
      policies: defaultPolicies({ maxSteps: 3 }),
    });
    const llm = await model([
      plan(['[BOOKER] Book a table']),
      { toolCalls: [{ name: 'book', arguments: {} }] },
      { content: 'By the window.' },
      finish('success', 'Booked.'),
      { content: 'A table is booked.' },
    ]);
    const asked: string[] = [];
    const outcome = await runFlow(createPlanningFlow({ agents: { booker } }), 'Book a table', {
      llm,
      onElicitation: (request, call) => {
        asked.push(`${call.name}: ${request.message}`);
        return { action: 'accept', content: { people: 3 } };
      },
      onSampling: (request, call) => {
        asked.push(`${call.name} samples ${request.maxTokens} tokens`);
        return true;
      },
    });
    expect(outcome.finishReason).toBe('completed');
    expect(asked).toEqual(['book: How many?', 'book samples 20 tokens']);
    const toolMessage = server?.requests[3]?.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toContain('accept 3; note: By the window.');
    server?.assertConsumed();
  });
});
