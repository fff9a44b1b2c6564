import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { AnyEffect, HostEffect } from '../src/kernel/effects.js';
import { defaultPolicies, tokenBudget } from '../src/kernel/policies.js';
import { initialState, type StepFunction, step } from '../src/kernel/reducer.js';
import type { RunError } from '../src/kernel/runError.js';
import type { AgentState } from '../src/kernel/state.js';
import type { LlmPort } from '../src/llm/llm.js';
import { portComplete } from '../src/llm/llm.js';
import { err, ok } from '../src/result.js';
import { drive } from '../src/shell/driver.js';
import { resume, run, stream } from '../src/shell/run.js';
import { createResourcePool } from '../src/shell/scope.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { defineTool, type Tool } from '../src/tools/defineTool.js';
import { echo } from './toolHelpers.js';

/** A model whose replies the test releases one at a time. */
function gatedLlm() {
  const waiting: ((reply: { content: string; calls?: { name: string; arguments: string }[] }) => void)[] = [];
  let served = 0;
  const llm: LlmPort = {
    model: 'gated',
    complete: portComplete(
      (_request, options) =>
        new Promise((resolve) => {
          const n = served++;
          options?.signal?.addEventListener('abort', () => resolve(err({ kind: 'aborted', message: 'aborted' })));
          waiting.push(({ content, calls = [] }) =>
            resolve(ok({ content, toolCalls: calls.map((c, i) => ({ id: `c${n}_${i}`, ...c })) })),
          );
        }),
    ),
  };
  const next = async () => {
    while (waiting.length === 0) await new Promise((r) => setTimeout(r, 1));
    return waiting.shift() as (typeof waiting)[number];
  };
  return { llm, next };
}

describe('the driver and its performers', () => {
  it('an effect nobody performs fails the run with a clear reason instead of pausing', async () => {
    // A host step that asks for an effect of its own before every model call.
    const custom: StepFunction = (config, state, event) => {
      const [next, effects] = step(config, state, event);
      const notify: HostEffect = { type: 'audit:log', id: `audit-${next.requestSeq}`, step: next.step };
      return [next, effects.some((e) => e.type === 'callLlm') ? [notify, ...effects] : effects];
    };
    const agent = createAgent({ name: 'a', tools: [echo], step: custom });
    const outcome = await run(agent, 'go', { llm: scriptedLlm([{ content: 'done' }]) });
    expect(outcome).toMatchObject({ status: 'failed', finishReason: 'error' });
    expect(outcome.error?.message).toBe('no performer for effect "audit:log"');
  });

  it('a host effect runs through the performer the host registers, and its answer reaches the host step', async () => {
    const logged: unknown[] = [];
    let answered = 0;
    const custom: StepFunction = (config, state, event) => {
      if (event.type === 'audit:logged') {
        answered++;
        return [state, []];
      }
      const [next, effects] = step(config, state, event);
      const notify: HostEffect = { type: 'audit:log', id: `audit-${next.requestSeq}`, step: next.step };
      return [next, effects.some((e) => e.type === 'callLlm') ? [notify, ...effects] : effects];
    };
    const agent = createAgent({ name: 'a', tools: [echo], step: custom });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { content: 'done' }]);
    const outcome = await run(agent, 'go', {
      llm,
      performers: {
        'audit:log': (effect: AnyEffect) => {
          logged.push(effect);
          return { type: 'audit:logged', effectId: (effect as HostEffect).id };
        },
      },
    });
    expect(outcome.answer).toBe('done');
    expect(logged).toEqual([
      { type: 'audit:log', id: 'audit-1', step: 1 },
      { type: 'audit:log', id: 'audit-2', step: 2 },
    ]);
    expect(answered).toBe(2);
  });

  it('a built-in performer can be replaced for one run', async () => {
    const agent = createAgent({ name: 'a', tools: [echo] });
    const outcome = await run(agent, 'go', {
      llm: scriptedLlm([]),
      performers: {
        callLlm: (effect) => ({
          type: 'llmResponded',
          effectId: effect.id,
          content: 'from my own model',
          toolCalls: [],
        }),
      },
    });
    expect(outcome.answer).toBe('from my own model');
  });

  it('calls that are not parallel-safe run one after another, in order', async () => {
    const log: string[] = [];
    const slow = defineTool({
      name: 'slow',
      description: 'Slow',
      parameters: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        log.push(`start ${n}`);
        await new Promise((r) => setTimeout(r, 20));
        log.push(`end ${n}`);
        return `${n}`;
      },
    });
    const agent = createAgent({ name: 'a', tools: [slow] });
    const llm = scriptedLlm([
      { toolCalls: [1, 2, 3].map((n) => ({ name: 'slow', arguments: { n } })) },
      { content: 'ok' },
    ]);
    await run(agent, 'go', { llm });
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });

  it('a tool that rejects from its own abort listener on timeout is reported as the timeout', async () => {
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Rejects when aborted',
      parameters: z.object({}),
      timeoutMs: 30,
      execute: (_args, { signal }) =>
        new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'stubborn' }] }, { content: 'ok' }]);
    await run(createAgent({ name: 'a', tools: [stubborn] }), 'go', { llm });
    const tool = llm.requests[1]?.messages.find((m) => m.role === 'tool');
    expect(tool?.content).toBe('Error: stubborn timed out after 30 ms and was stopped.');
  });
});

describe('once a run has returned', () => {
  it('late results of a cancelled run change nothing and no late checkpoint overwrites the host’s state', async () => {
    let finishTool: (value: string) => void = () => {};
    const late = defineTool({
      name: 'late',
      description: 'Answers when the test says so, ignoring cancellation',
      parameters: z.object({}),
      execute: () => new Promise<string>((resolve) => (finishTool = resolve)),
    });
    const agent = createAgent({ name: 'a', tools: [late] });
    const checkpoints: AgentState[] = [];
    const controller = new AbortController();
    const llm = scriptedLlm([{ toolCalls: [{ name: 'late' }] }]);
    const running = run(agent, 'go', { llm, signal: controller.signal, checkpoint: (s) => void checkpoints.push(s) });
    while (checkpoints.at(-1)?.status !== 'awaiting_tools') await new Promise((r) => setTimeout(r, 1));
    controller.abort('stop');
    const outcome = await running;
    expect(outcome).toMatchObject({ status: 'finished', finishReason: 'cancelled' });
    const saved = checkpoints.length;
    finishTool('too late');
    await new Promise((r) => setTimeout(r, 20));
    expect(checkpoints).toHaveLength(saved);
    expect(checkpoints.at(-1)).toBe(outcome.state);
  });
});

describe('per-run scope', () => {
  it('each run opens its own resources and closes only its own when it ends', async () => {
    const events: string[] = [];
    let opened = 0;
    const browserish = defineTool({
      name: 'page',
      description: 'Uses a per-run resource',
      parameters: z.object({}),
      open: (scope) => {
        const id = `r${++opened}`;
        events.push(`open ${id} for ${scope.runId}`);
        return { id, closed: false };
      },
      close: (resource) => {
        resource.closed = true;
        events.push(`close ${resource.id}`);
      },
      execute: async (_args, _scope, resource) => {
        await new Promise((r) => setTimeout(r, 5));
        return resource.closed ? 'used after close' : `used ${resource.id}`;
      },
    });
    const agent = createAgent({ name: 'a', tools: [browserish] });
    const gateA = gatedLlm();
    const gateB = gatedLlm();
    const a = run(agent, 'a', { llm: gateA.llm, runId: 'A' });
    const b = run(agent, 'b', { llm: gateB.llm, runId: 'B' });
    (await gateA.next())({ content: '', calls: [{ name: 'page', arguments: '{}' }] });
    (await gateB.next())({ content: '', calls: [{ name: 'page', arguments: '{}' }] });
    (await gateA.next())({ content: 'A done' });
    expect((await a).answer).toBe('A done');
    // B still holds its own resource after A ended.
    expect(events.filter((e) => e.startsWith('close'))).toHaveLength(1);
    (await gateB.next())({ content: '', calls: [{ name: 'page', arguments: '{}' }] });
    (await gateB.next())({ content: 'B done' });
    const outcomeB = await b;
    const uses = outcomeB.state.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(uses.every((u) => u.startsWith('used r'))).toBe(true);
    expect(events.filter((e) => e.startsWith('open'))).toHaveLength(2);
    expect(events.filter((e) => e.startsWith('close'))).toHaveLength(2);
    expect(events.filter((e) => e.startsWith('open')).map((e) => e.split(' for ')[1])).toEqual(['A', 'B']);
  });

  it('a pool the host passes outlives the run until the host closes it', async () => {
    let closed = 0;
    const held = defineTool({
      name: 'held',
      description: 'Holds a resource',
      parameters: z.object({}),
      open: () => ({}),
      close: () => {
        closed++;
      },
      execute: () => 'x',
    });
    const agent = createAgent({ name: 'a', tools: [held] });
    const resources = createResourcePool();
    const script = () => scriptedLlm([{ toolCalls: [{ name: 'held' }] }, { content: 'ok' }]);
    await run(agent, 'x', { llm: script(), resources });
    await run(agent, 'x', { llm: script(), resources });
    expect(closed).toBe(0);
    await resources.close();
    expect(closed).toBe(1);
    await run(agent, 'x', { llm: script() });
    expect(closed).toBe(2);
  });

  it('tools get the run id and their effect id, stable across a resume', async () => {
    const seen: string[] = [];
    const who = defineTool({
      name: 'who',
      description: 'Reports its scope',
      parameters: z.object({}),
      execute: (_args, scope) => {
        seen.push(`${scope.runId}:${scope.effectId}`);
        return 'ok';
      },
    });
    const agent = createAgent({ name: 'a', tools: [who] });
    let saved: AgentState | undefined;
    const first = await run(agent, 'x', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'who' }] }]),
      runId: 'run-7',
      checkpoint: (state) => {
        if (state.status === 'awaiting_tools') saved = state;
      },
    });
    expect(first.runId).toBe('run-7');
    expect(saved?.runId).toBe('run-7');
    await resume(agent, JSON.parse(JSON.stringify(saved)), { llm: scriptedLlm([{ content: 'done' }]) });
    expect(seen).toEqual(['run-7:running-1-0', 'run-7:running-1-0']);
  });
});

describe('live tool lists', () => {
  it('tools added and removed mid-run change what the next request offers, in a list that keeps its order; a gone tool is unavailable', async () => {
    const extra = defineTool({
      name: 'extra',
      description: 'Added later',
      parameters: z.object({}),
      execute: () => 'x',
    });
    const manage = defineTool({
      name: 'manage',
      description: 'Adds extra, removes echo',
      parameters: z.object({}),
      execute: async (_args, scope) => {
        await scope.changeTools({ add: [extra as Tool], remove: ['echo'] });
        return 'changed';
      },
    });
    const agent = createAgent({ name: 'a', tools: [echo, manage] });
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'manage' }] },
      { toolCalls: [{ name: 'echo', arguments: { text: 'x' } }, { name: 'extra' }] },
      { content: 'done' },
    ]);
    const outcome = await run(agent, 'go', { llm });
    expect(llm.requests[0]?.tools.map((t) => t.name)).toEqual(['echo', 'manage']);
    // The list keeps its order: echo stays listed, gone; extra comes at the end.
    expect(llm.requests[1]?.tools.map((t) => t.name)).toEqual(['echo', 'manage', 'extra']);
    const results = llm.requests[2]?.messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content)
      .slice(-2);
    expect(results).toEqual([expect.stringMatching(/^Error: the tool 'echo' is not available any more/), 'x']);
    expect(outcome.state.tools?.map((t) => t.name)).toEqual(['echo', 'manage', 'extra']);
    expect(outcome.state.unavailableTools).toEqual(['echo']);
  });

  it('changeTools with exact takes the gone tool out of the list (the cache starts again)', async () => {
    const manage = defineTool({
      name: 'manage',
      description: 'Removes echo from the list',
      parameters: z.object({}),
      execute: async (_args, scope) => {
        await scope.changeTools({ remove: ['echo'], exact: true });
        return 'changed';
      },
    });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'manage' }] }, { content: 'done' }]);
    await run(createAgent({ name: 'a', tools: [echo, manage] }), 'go', { llm });
    expect(llm.requests[1]?.tools.map((t) => t.name)).toEqual(['manage']);
  });
});

describe('live tool lists across a resume', () => {
  const extra = defineTool({
    name: 'extra',
    description: 'Added later',
    parameters: z.object({}),
    execute: () => 'extra ran',
  });
  const manage = defineTool({
    name: 'manage',
    description: 'Adds extra',
    parameters: z.object({}),
    execute: async (_args, scope) => {
      await scope.changeTools({ add: [extra as Tool] });
      return 'added';
    },
  });
  /** A run that adds `extra` mid-run, saved (as JSON) once the model is to be asked again. */
  async function savedAfterAdding(): Promise<unknown> {
    const states: AgentState[] = [];
    const llm = scriptedLlm([{ toolCalls: [{ name: 'manage' }] }, { content: 'done' }]);
    await run(createAgent({ name: 'a', tools: [echo, manage] }), 'go', {
      llm,
      checkpoint: (state) => void states.push(state),
    });
    expect(llm.requests[1]?.tools.map((t) => t.name)).toEqual(['echo', 'manage', 'extra']);
    const asking = states.findLast((state) => state.status === 'awaiting_llm');
    expect(asking?.tools?.map((t) => t.name)).toEqual(['echo', 'manage', 'extra']);
    return JSON.parse(JSON.stringify(asking));
  }
  const callsExtra = () => scriptedLlm([{ toolCalls: [{ name: 'extra' }] }, { content: 'over' }]);
  const results = (llm: ReturnType<typeof scriptedLlm>) =>
    llm.requests[1]?.messages.filter((m) => m.role === 'tool').map((m) => m.content);

  it('a tool added mid-run whose implementation is gone is not offered on resume, and a call to it lists only what can run', async () => {
    const llm = callsExtra();
    const outcome = await resume(createAgent({ name: 'a', tools: [echo, manage] }), await savedAfterAdding(), { llm });
    expect(llm.requests[0]?.tools.map((t) => t.name)).toEqual(['echo', 'manage']);
    expect(results(llm)?.at(-1)).toBe("Error: unknown tool 'extra'. Available tools: echo, manage.");
    expect(outcome.state.tools?.map((t) => t.name)).toEqual(['echo', 'manage']);
  });

  it('one whose implementation the agent has (by name) survives the resume and runs', async () => {
    const llm = callsExtra();
    const agent = createAgent({ name: 'a', tools: [echo, manage, extra] });
    const outcome = await resume(agent, await savedAfterAdding(), { llm });
    expect(llm.requests[0]?.tools.map((t) => t.name)).toEqual(['echo', 'manage', 'extra']);
    expect(results(llm)?.at(-1)).toBe('extra ran');
    expect(outcome).toMatchObject({ status: 'finished', answer: 'over' });
  });
});

describe('a total reducer', () => {
  it('a budget with a tokenizer that was never loaded is estimated, with a visible note, instead of throwing', () => {
    const agent = createAgent({
      name: 'a',
      tokenizer: 'o200k_base',
      policies: [tokenBudget({ maxInputTokens: 10_000 })],
    });
    const [state, effects] = (agent.step ?? step)(agent.config, initialState(), { type: 'started', input: 'hello' });
    expect(state.status).toBe('awaiting_llm');
    expect(effects).toContainEqual({ type: 'emit', observation: { kind: 'tokensEstimated', tokenizer: 'o200k_base' } });
  });
});

describe('streams that stop', () => {
  it('leaving the loop early cancels the run and releases its resources', async () => {
    let closed = 0;
    const held = defineTool({
      name: 'held',
      description: 'Holds a resource',
      parameters: z.object({}),
      parallelSafe: true,
      open: () => ({}),
      close: () => {
        closed++;
      },
      execute: () => 'x',
    });
    const agent = createAgent({ name: 'a', tools: [held], policies: defaultPolicies({ maxSteps: 1000 }) });
    const llm = scriptedLlm(() => ({ toolCalls: [{ name: 'held' }] }));
    let items = 0;
    for await (const item of stream(agent, 'loop forever', { llm })) {
      if (item.type === 'event' && item.state.step >= 3) break;
      items++;
    }
    expect(items).toBeGreaterThan(0);
    expect(closed).toBe(1);
    const requests = llm.requests.length;
    await new Promise((r) => setTimeout(r, 20));
    expect(llm.requests.length).toBe(requests);
  });

  it('a consumer that does not read slows the run instead of buffering without end', async () => {
    const agent = createAgent({ name: 'a', tools: [echo], policies: defaultPolicies({ maxSteps: 1000 }) });
    const llm = scriptedLlm(() => ({ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }));
    const iterator = stream(agent, 'loop', { llm });
    await iterator.next();
    await new Promise((r) => setTimeout(r, 50));
    // Each step is a handful of items; a bounded buffer of 64 holds well under 30 steps.
    expect(llm.requests.length).toBeLessThan(30);
    await iterator.return?.();
  });
});

describe('strict restore', () => {
  it('refuses a newer or damaged saved state, naming the field, before anything is sent', async () => {
    const agent = createAgent({ name: 'a', tools: [echo] });
    const llm = scriptedLlm([{ content: 'never' }]);
    const [fresh] = step(agent.config, initialState(), { type: 'started', input: 'x' });
    await expect(resume(agent, { ...fresh, schemaVersion: 99 }, { llm })).rejects.toThrow(/schemaVersion 99, newer/);
    await expect(resume(agent, { ...fresh, messages: null }, { llm })).rejects.toThrow(/messages/);
    await expect(resume(agent, { ...fresh, status: 'awaiting_tools' }, { llm })).rejects.toThrow(/turn/);
    expect(llm.requests).toHaveLength(0);
  });
});

describe('the driver runs any reducer', () => {
  // A two-step "flow" of its own: fetch a number, then double it; its state is a plain object.
  type FlowState = { status: 'fetching' | 'doubling' | 'done' | 'stopped'; value?: number; note?: string };
  type FlowEvent =
    | { type: 'go' }
    | { type: 'fetched'; value: number }
    | { type: 'doubled'; value: number }
    | { type: 'stop'; note: string };
  type FlowEffect = { type: 'fetch'; id: string } | { type: 'double'; id: string; value: number };
  const flow = {
    step: (state: FlowState, event: FlowEvent): readonly [FlowState, readonly FlowEffect[]] => {
      if (state.status === 'done' || state.status === 'stopped') return [state, []];
      switch (event.type) {
        case 'go':
          return [{ status: 'fetching' }, [{ type: 'fetch', id: 'f1' }]];
        case 'fetched':
          return [{ status: 'doubling', value: event.value }, [{ type: 'double', id: 'd1', value: event.value }]];
        case 'doubled':
          return [{ status: 'done', value: event.value }, []];
        case 'stop':
          return [{ ...state, status: 'stopped', note: event.note }, []];
      }
    },
    isFinal: (state: FlowState) => state.status === 'done' || state.status === 'stopped',
    cancelled: (note: string): FlowEvent => ({ type: 'stop', note }),
    faulted: (error: RunError): FlowEvent => ({ type: 'stop', note: `fault: ${error.message}` }),
  };

  it('performs its effects, saves every state and announces every transition', async () => {
    const saved: FlowState[] = [];
    const announced: string[] = [];
    const { state, fault } = await drive(
      {
        machine: flow,
        performers: {
          fetch: async () => ({ type: 'fetched' as const, value: 21 }),
          double: (effect) => ({ type: 'doubled' as const, value: effect.value * 2 }),
        },
        save: (s) => void saved.push(s),
        announce: (item) => void announced.push(item.type === 'event' ? item.event.type : item.effect.type),
      },
      { status: 'fetching' },
      { type: 'go' },
    );
    expect(fault).toBeUndefined();
    expect(state).toEqual({ status: 'done', value: 42 });
    expect(saved.map((s) => s.status)).toEqual(['fetching', 'doubling', 'done']);
    expect(announced).toEqual(['go', 'fetch', 'fetched', 'double', 'doubled']);
  });

  it('ends with the machine’s own cancel event when the signal aborts, and a missing performer is a fault', async () => {
    const controller = new AbortController();
    const cancelled = drive(
      {
        machine: flow,
        performers: { fetch: () => new Promise<undefined>(() => controller.abort('enough')) },
        signal: controller.signal,
      },
      { status: 'fetching' },
      { type: 'go' },
    );
    expect((await cancelled).state).toEqual({ status: 'stopped', note: 'enough' });
    const missing = await drive({ machine: flow, performers: {} }, { status: 'fetching' }, { type: 'go' });
    expect(missing.state).toEqual({ status: 'stopped', note: 'fault: no performer for effect "fetch"' });
  });

  it('waits for a host whose announcements return promises, then still performs every effect, in order', async () => {
    type State = { readonly got: readonly string[] };
    type Event = { type: 'go' } | { type: 'got'; id: string } | { type: 'stop'; note: string };
    type Fetch = { type: 'fetch'; id: string };
    const machine = {
      step: (state: State, event: Event): readonly [State, readonly Fetch[]] => {
        if (event.type === 'go')
          return [
            state,
            [
              { type: 'fetch', id: 'a' },
              { type: 'fetch', id: 'b' },
            ],
          ];
        return event.type === 'got' ? [{ got: [...state.got, event.id] }, []] : [state, []];
      },
      isFinal: (state: State) => state.got.length === 2,
      cancelled: (note: string): Event => ({ type: 'stop', note }),
      faulted: (error: RunError): Event => ({ type: 'stop', note: error.message }),
    };
    const log: string[] = [];
    // A slow consumer: an event's announcement takes longer than an effect's, so a driver that did
    // not wait for it would perform the effects first.
    const settled = (what: string, ms: number) =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          log.push(`announced ${what}`);
          resolve();
        }, ms),
      );
    const { state, fault } = await drive(
      {
        machine,
        performers: {
          fetch: (effect) => {
            log.push(`performed ${effect.id}`);
            return { type: 'got' as const, id: effect.id };
          },
        },
        announce: (item) =>
          item.type === 'event' ? settled(item.event.type, 5) : settled(`${item.effect.type} ${item.effect.id}`, 1),
      },
      { got: [] },
      { type: 'go' },
    );
    expect(fault).toBeUndefined();
    expect(state.got).toEqual(['a', 'b']);
    expect(log).toEqual([
      'announced go',
      'announced fetch a',
      'performed a',
      'announced fetch b',
      'performed b',
      'announced got',
      'announced got',
    ]);
  });

  it('a save that fails ends the run as faulted without saving again', async () => {
    let saves = 0;
    const { state, fault } = await drive(
      {
        machine: flow,
        performers: {
          fetch: () => ({ type: 'fetched' as const, value: 1 }),
          double: () => ({ type: 'doubled' as const, value: 2 }),
        },
        save: () => {
          if (++saves === 2) throw new Error('disk full');
        },
      },
      { status: 'fetching' },
      { type: 'go' },
    );
    expect(fault).toEqual({ code: 'CHECKPOINT_FAILED', message: 'could not save a checkpoint: disk full' });
    expect(state).toMatchObject({ status: 'stopped', value: 1 });
    expect(saves).toBe(2);
  });
});

describe('at-most-once tools', () => {
  it('a call a crash interrupted is not run again on resume: the model is told it may or may not have happened', async () => {
    let runs = 0;
    const controller = new AbortController();
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploys; must never run twice',
      parameters: z.object({}),
      atMostOnce: true,
      execute: () => {
        runs++;
        controller.abort('the process died'); // while this call runs
        return new Promise<string>(() => {});
      },
    });
    const agent = createAgent({ name: 'a', tools: [deploy] });
    let saved: string | undefined;
    await run(agent, 'ship it', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'deploy' }] }]),
      signal: controller.signal,
      checkpoint: (state) => {
        // The last state a crashed process would have left on disk.
        if (state.status === 'awaiting_tools') saved = JSON.stringify(state);
      },
    });
    expect(JSON.parse(saved ?? '{}').turn.calls[0].started).toBe(true);
    expect(runs).toBe(1);
    const llm = scriptedLlm([{ content: 'I will check whether it was deployed.' }]);
    const outcome = await resume(agent, JSON.parse(saved ?? '{}'), { llm });
    expect(runs).toBe(1);
    expect(outcome.answer).toBe('I will check whether it was deployed.');
    const observation = llm.requests[0]?.messages.find((m) => m.role === 'tool')?.content;
    expect(observation).toMatch(/^Error: deploy was interrupted while it ran .* may or may not have taken effect/);
  });

  it('a tool without the flag is run again after a crash (at least once)', async () => {
    let runs = 0;
    const retry = defineTool({
      name: 'fetch',
      description: 'Safe to repeat',
      parameters: z.object({}),
      execute: () => (++runs === 1 ? new Promise<string>(() => {}) : 'fetched'),
    });
    const agent = createAgent({ name: 'a', tools: [retry] });
    let saved: string | undefined;
    const controller = new AbortController();
    await run(agent, 'go', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'fetch' }] }]),
      signal: controller.signal,
      checkpoint: (state) => {
        if (state.status === 'awaiting_tools') {
          saved = JSON.stringify(state);
          setTimeout(() => controller.abort('the process died'), 5);
        }
      },
    });
    const outcome = await resume(agent, JSON.parse(saved ?? '{}'), { llm: scriptedLlm([{ content: 'done' }]) });
    expect(runs).toBe(2);
    expect(outcome.answer).toBe('done');
  });
});
