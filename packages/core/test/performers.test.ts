import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Agent, createAgent, defineAgent } from '../src/kernel/agent.js';
import type { ContextProvider } from '../src/kernel/context.js';
import type { AgentEvent } from '../src/kernel/events.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { InvalidEventError, type StepFunction, step } from '../src/kernel/reducer.js';
import type { RunError } from '../src/kernel/runError.js';
import type { AgentState } from '../src/kernel/state.js';
import type { LlmError, LlmPort } from '../src/llm/llm.js';
import { portComplete } from '../src/llm/llm.js';
import { err, errAsync } from '../src/result.js';
import { drive } from '../src/shell/driver.js';
import { run } from '../src/shell/run.js';
import { createRunEmitter } from '../src/shell/runItems.js';
import type { ApprovalDecision, RunScope } from '../src/shell/scope.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { askHuman } from '../src/tools/askHuman.js';
import { defineTool, type Tool } from '../src/tools/defineTool.js';
import { echo } from './toolHelpers.js';

const deploy = (log: string[] = []) =>
  defineTool({
    name: 'deploy',
    description: 'Deploy',
    parameters: z.object({ env: z.string() }),
    needsApproval: true,
    execute: ({ env }) => {
      log.push(env);
      return `deployed to ${env}`;
    },
  });

const toolMessages = (state: AgentState) => state.messages.filter((m) => m.role === 'tool').map((m) => m.content);

describe('approvals', () => {
  const ship = async (onApproval?: (call: unknown, args: unknown) => ApprovalDecision | Promise<ApprovalDecision>) => {
    const ran: string[] = [];
    const agent = createAgent({ name: 'a', tools: [deploy(ran)] });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }, { content: 'ok' }]);
    const outcome = await run(agent, 'ship', { llm, ...(onApproval ? { onApproval } : {}) });
    return { outcome, ran };
  };

  it('a plain true runs the call', async () => {
    const { outcome, ran } = await ship(() => true);
    expect(ran).toEqual(['prod']);
    expect(toolMessages(outcome.state)).toEqual(['deployed to prod']);
  });

  it('{ approved: true } runs the call', async () => {
    const { outcome, ran } = await ship(async () => ({ approved: true, reason: 'looks fine' }));
    expect(ran).toEqual(['prod']);
    expect(toolMessages(outcome.state)).toEqual(['deployed to prod']);
  });

  it('a plain false refuses the call without a reason', async () => {
    const { outcome, ran } = await ship(() => false);
    expect(ran).toEqual([]);
    expect(toolMessages(outcome.state)).toEqual(['Error: the user did not approve this call.']);
  });

  it('{ approved: false, reason } refuses it with the reason; without one, with none', async () => {
    const withReason = await ship(() => ({ approved: false, reason: 'code freeze' }));
    expect(toolMessages(withReason.outcome.state)).toEqual(['Error: the user did not approve this call: code freeze']);
    const without = await ship(() => ({ approved: false }));
    expect(toolMessages(without.outcome.state)).toEqual(['Error: the user did not approve this call.']);
    expect([...withReason.ran, ...without.ran]).toEqual([]);
  });

  it('the callback gets the call and its parsed arguments', async () => {
    const asked: unknown[] = [];
    await ship((call, args) => {
      asked.push(call, args);
      return true;
    });
    expect(asked).toEqual([{ id: 'call_0_0', name: 'deploy', arguments: '{"env":"prod"}' }, { env: 'prod' }]);
  });

  it('a callback that rejects refuses the call, saying why', async () => {
    const { outcome, ran } = await ship(() => Promise.reject('the policy service is down'));
    expect(ran).toEqual([]);
    expect(toolMessages(outcome.state)).toEqual([
      'Error: the user did not approve this call: the approval check failed: the policy service is down',
    ]);
  });

  it('without a callback the run pauses, listing the call to approve, and nothing runs', async () => {
    const { outcome, ran } = await ship();
    expect(ran).toEqual([]);
    expect(outcome).toMatchObject({ status: 'awaiting_approval', answer: '' });
    expect(outcome.pending).toEqual([
      {
        kind: 'approval',
        effectId: 'approval-1-0',
        call: { id: 'call_0_0', name: 'deploy', arguments: '{"env":"prod"}' },
        args: { env: 'prod' },
      },
    ]);
  });
});

describe('questions for a person', () => {
  const agent = createAgent({ name: 'h', tools: [askHuman] });
  const script = () =>
    scriptedLlm([{ toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which city?' } }] }, { content: 'ok' }]);

  it('the answer is the observation; the callback gets the question and the call', async () => {
    const asked: unknown[] = [];
    const outcome = await run(agent, 'plan', {
      llm: script(),
      onHuman: async (question, call) => {
        asked.push(question, call.name);
        return 'Kyoto';
      },
    });
    expect(asked).toEqual(['Which city?', 'ask_human']);
    expect(toolMessages(outcome.state)).toEqual(['Kyoto']);
    expect(outcome.answer).toBe('ok');
  });

  it('a callback that fails is answered with the reason the question could not be asked', async () => {
    const outcome = await run(agent, 'plan', {
      llm: script(),
      onHuman: () => Promise.reject(new Error('no terminal')),
    });
    expect(toolMessages(outcome.state)).toEqual(['(The question could not be asked: no terminal)']);
  });

  it('without a callback the run pauses on the question', async () => {
    const llm = scriptedLlm([{ toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which city?' } }] }]);
    const outcome = await run(agent, 'plan', { llm });
    expect(outcome.status).toBe('awaiting_human');
    expect(outcome.pending).toEqual([
      {
        kind: 'human',
        effectId: 'human-1-0',
        question: 'Which city?',
        call: { id: 'call_0_0', name: 'ask_human', arguments: '{"inquire":"Which city?"}' },
      },
    ]);
  });
});

describe('the model port', () => {
  const agent = createAgent({ name: 'a' });

  it('a failure it returns fails the run with the failure described', async () => {
    const llm = scriptedLlm([{ error: { status: 429, message: 'slow down' } }]);
    const outcome = await run(agent, 'hi', { llm });
    expect(outcome).toMatchObject({
      status: 'failed',
      finishReason: 'error',
      error: {
        code: 'LLM_RATE_LIMIT',
        message: 'the model request failed: rate_limit (HTTP 429): slow down',
        status: 429,
      },
    });
    expect(outcome.usage.llmCalls).toBe(1);
  });

  it("the outcome's error code tells a rate limit, with its Retry-After, from an auth failure", async () => {
    const failing = (error: LlmError): LlmPort => ({ model: 'x', complete: () => errAsync(error) });
    const limited = await run(agent, 'hi', {
      llm: failing({ kind: 'rate_limit', message: 'slow down', status: 429, retryAfterMs: 2_000 }),
    });
    expect(limited.error).toMatchObject({ code: 'LLM_RATE_LIMIT', status: 429, retryAfterMs: 2_000 });
    expect(limited.state.error).toEqual(limited.error);
    const refused = await run(agent, 'hi', { llm: failing({ kind: 'auth', message: 'bad key', status: 401 }) });
    expect(refused.error).toEqual({
      code: 'LLM_AUTH',
      message: 'the model request failed: auth (HTTP 401): bad key',
      status: 401,
    });
  });

  it('a failure without a status is described by its kind and message', async () => {
    const llm: LlmPort = {
      model: 'x',
      complete: () => errAsync({ kind: 'network', message: 'reset' }),
    };
    expect((await run(agent, 'hi', { llm })).error).toEqual({
      code: 'LLM_NETWORK',
      message: 'the model request failed: network: reset',
    });
  });

  it('a port that throws fails the run with what it threw', async () => {
    const throws: LlmPort = {
      model: 'x',
      complete: () => {
        throw new Error('socket exploded');
      },
    };
    expect((await run(agent, 'hi', { llm: throws })).error?.message).toBe(
      'the model request failed: the LLM port threw: socket exploded',
    );
    const rejects: LlmPort = { model: 'x', complete: portComplete(() => Promise.reject('a bare string')) };
    expect((await run(agent, 'hi', { llm: rejects })).error?.message).toBe(
      'the model request failed: the LLM port threw: a bare string',
    );
  });

  it('gets the run’s signal: cancelling mid-request aborts it and ends the run as cancelled', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const llm: LlmPort = {
      model: 'slow',
      complete: portComplete(
        (_request, options) =>
          new Promise((resolve) => {
            seen = options?.signal;
            options?.signal?.addEventListener('abort', () =>
              resolve(err({ kind: 'aborted', message: 'the request was aborted' })),
            );
            controller.abort('the user left');
          }),
      ),
    };
    const outcome = await run(agent, 'hi', { llm, signal: controller.signal });
    expect(seen?.aborted).toBe(true);
    expect(outcome).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'the user left' },
    });
  });

  it('the reply’s content, calls and usage reach the state', async () => {
    const llm = scriptedLlm([{ content: 'hello', usage: { inputTokens: 12, outputTokens: 3 } }]);
    const outcome = await run(agent, 'hi', { llm });
    expect(outcome.usage).toEqual({ inputTokens: 12, outputTokens: 3, llmCalls: 1 });
    expect(outcome.state.messages.at(-1)).toEqual({ role: 'assistant', content: 'hello' });
  });
});

describe('gathering context', () => {
  const seenByApply: unknown[] = [];
  const page: ContextProvider = {
    name: 'page',
    when: (state) => state.step === 1,
    apply: (gathered, request) => {
      seenByApply.push(gathered);
      return { ...request, nextStepPrompt: `Page: ${JSON.stringify(gathered) ?? 'none'}` };
    },
  };

  const contextEvents = (emitter: ReturnType<typeof createRunEmitter>) => {
    const events: AgentEvent[] = [];
    emitter.on('event', (item) => {
      if (item.event.type === 'contextGathered') events.push(item.event as AgentEvent);
    });
    return events;
  };

  it('without a gatherer for the provider, the step goes on without its context, saying why', async () => {
    seenByApply.length = 0;
    const agent = createAgent({ name: 'a', contextProviders: [page] });
    const emitter = createRunEmitter();
    const events = contextEvents(emitter);
    const llm = scriptedLlm([{ content: 'done' }]);
    const outcome = await run(agent, 'go', { llm, emitter });
    expect(outcome.answer).toBe('done');
    expect(events).toEqual([
      {
        type: 'contextGathered',
        effectId: 'context-1-page',
        error: { code: 'CONTEXT_FAILED', message: 'no gatherer is registered for context provider "page"' },
      },
    ]);
    expect(seenByApply).toEqual([undefined]);
    expect(llm.requests[0]?.messages.at(-1)?.content).toBe('Page: none');
  });

  it('a gatherer’s data reaches the request; it gets the run’s scope', async () => {
    seenByApply.length = 0;
    let scope: RunScope | undefined;
    const agent = createAgent({
      name: 'a',
      contextProviders: [page],
      contextGatherers: {
        page: async (s) => {
          scope = s;
          return { url: 'http://x.test/' };
        },
      },
    });
    const llm = scriptedLlm([{ content: 'done' }]);
    await run(agent, 'go', { llm, runId: 'run-9', workspace: '/ws' });
    expect(llm.requests[0]?.messages.at(-1)?.content).toBe('Page: {"url":"http://x.test/"}');
    expect(scope).toMatchObject({ runId: 'run-9', workspace: '/ws' });
    // The run has ended: the gatherer's signal says so.
    expect(scope?.signal.aborted).toBe(true);
  });

  it('a gatherer that throws leaves the step without its context, with the error', async () => {
    seenByApply.length = 0;
    const agent = createAgent({
      name: 'a',
      contextProviders: [page],
      contextGatherers: {
        page: async () => {
          throw new Error('browser closed');
        },
      },
    });
    const emitter = createRunEmitter();
    const events = contextEvents(emitter);
    const outcome = await run(agent, 'go', { llm: scriptedLlm([{ content: 'done' }]), emitter });
    expect(outcome.answer).toBe('done');
    expect(events).toEqual([
      {
        type: 'contextGathered',
        effectId: 'context-1-page',
        error: { code: 'CONTEXT_FAILED', message: 'browser closed' },
      },
    ]);
    expect(seenByApply).toEqual([undefined]);
  });
});

/** A parallel-safe (or not) tool that records how many of its calls run at once. */
function concurrencyProbe(parallelSafe: boolean, name = parallelSafe ? 'safe' : 'unsafe') {
  const stats = { running: 0, peak: 0, started: [] as number[] };
  const tool = defineTool({
    name,
    description: 'Takes a moment',
    parameters: z.object({ n: z.number() }),
    parallelSafe,
    execute: async ({ n }) => {
      stats.started.push(n);
      stats.peak = Math.max(stats.peak, ++stats.running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      stats.running--;
      return `${name} ${n}`;
    },
  });
  return { tool, stats };
}

const callsOf = (name: string, ns: number[]) => ns.map((n) => ({ name, arguments: { n } }));

describe('tool calls of one turn', () => {
  it('runs at most maxParallelTools parallel-safe calls at once, and answers in call order', async () => {
    const { tool, stats } = concurrencyProbe(true);
    const llm = scriptedLlm([{ toolCalls: callsOf('safe', [1, 2, 3, 4, 5]) }, { content: 'ok' }]);
    const outcome = await run(createAgent({ name: 'a', tools: [tool] }), 'go', { llm, maxParallelTools: 2 });
    expect(stats.peak).toBe(2);
    expect(stats.started).toEqual([1, 2, 3, 4, 5]);
    expect(toolMessages(outcome.state)).toEqual(['safe 1', 'safe 2', 'safe 3', 'safe 4', 'safe 5']);
  });

  it('runs up to 8 at once by default', async () => {
    const { tool, stats } = concurrencyProbe(true);
    const llm = scriptedLlm([{ toolCalls: callsOf('safe', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) }, { content: 'ok' }]);
    await run(createAgent({ name: 'a', tools: [tool] }), 'go', { llm });
    expect(stats.peak).toBe(8);
    expect(stats.started).toHaveLength(10);
  });

  it('a cap below one runs them one at a time instead of never', async () => {
    const { tool, stats } = concurrencyProbe(true);
    const llm = scriptedLlm([{ toolCalls: callsOf('safe', [1, 2, 3]) }, { content: 'ok' }]);
    const outcome = await run(createAgent({ name: 'a', tools: [tool] }), 'go', { llm, maxParallelTools: 0 });
    expect(stats.peak).toBe(1);
    expect(outcome.answer).toBe('ok');
  });

  it('a turn mixing parallel-safe and unsafe calls runs them all one at a time, in order', async () => {
    const safe = concurrencyProbe(true);
    const unsafe = concurrencyProbe(false);
    const order: number[] = [];
    safe.stats.started = order;
    unsafe.stats.started = order;
    const llm = scriptedLlm([
      { toolCalls: [...callsOf('safe', [1, 2]), ...callsOf('unsafe', [3]), ...callsOf('safe', [4])] },
      { content: 'ok' },
    ]);
    const agent = createAgent({ name: 'a', tools: [safe.tool, unsafe.tool] });
    const outcome = await run(agent, 'go', { llm, maxParallelTools: 8 });
    expect(Math.max(safe.stats.peak, unsafe.stats.peak)).toBe(1);
    expect(safe.stats.peak + unsafe.stats.peak).toBe(2);
    expect(order).toEqual([1, 2, 3, 4]);
    expect(toolMessages(outcome.state)).toEqual(['safe 1', 'safe 2', 'unsafe 3', 'safe 4']);
  });

  it('turns of unsafe calls do not overlap across steps either', async () => {
    const { tool, stats } = concurrencyProbe(false);
    const llm = scriptedLlm([
      { toolCalls: callsOf('unsafe', [1, 2]) },
      { toolCalls: callsOf('unsafe', [3, 4]) },
      { content: 'ok' },
    ]);
    await run(createAgent({ name: 'a', tools: [tool] }), 'go', { llm });
    expect(stats.peak).toBe(1);
    expect(stats.started).toEqual([1, 2, 3, 4]);
  });

  it('a failing unsafe call does not stop the ones after it', async () => {
    const boom = defineTool({
      name: 'boom',
      description: 'Throws',
      parameters: z.object({}),
      execute: () => Promise.reject(new Error('nope')),
    });
    const { tool, stats } = concurrencyProbe(false);
    const llm = scriptedLlm([{ toolCalls: [{ name: 'boom' }, ...callsOf('unsafe', [2])] }, { content: 'ok' }]);
    const outcome = await run(createAgent({ name: 'a', tools: [boom, tool] }), 'go', { llm });
    expect(stats.started).toEqual([2]);
    expect(toolMessages(outcome.state)).toEqual(['Error: boom failed: nope', 'unsafe 2']);
  });

  for (const parallelSafe of [false, true]) {
    it(`nothing new starts after a cancel (${parallelSafe ? 'parallel-safe' : 'one at a time'})`, async () => {
      const controller = new AbortController();
      const started: number[] = [];
      let firstReturned: () => void = () => {};
      const firstDone = new Promise<void>((resolve) => (firstReturned = resolve));
      const stops = defineTool({
        name: 'stops',
        description: 'The first call cancels the run once every call of the turn was handed out',
        parameters: z.object({ n: z.number() }),
        parallelSafe,
        execute: async ({ n }) => {
          started.push(n);
          if (n === 1) {
            await new Promise((resolve) => setImmediate(resolve));
            controller.abort('stop now');
            firstReturned();
          }
          return `ran ${n}`;
        },
      });
      const llm = scriptedLlm([{ toolCalls: callsOf('stops', [1, 2, 3]) }, { content: 'never' }]);
      const outcome = await run(createAgent({ name: 'a', tools: [stops] }), 'go', {
        llm,
        signal: controller.signal,
        maxParallelTools: 1,
      });
      expect(outcome).toMatchObject({ finishReason: 'cancelled', error: { code: 'CANCELLED', message: 'stop now' } });
      // The run returns at the cancel; the first call gives its slot back after that. Nothing waiting for it starts.
      await firstDone;
      for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(started).toEqual([1]);
      expect(llm.requests).toHaveLength(1);
    });
  }

  it('a turn run one call at a time takes no slots: the next parallel turn still runs at most the cap at once', async () => {
    const unsafe = concurrencyProbe(false);
    const safe = concurrencyProbe(true);
    const llm = scriptedLlm([
      { toolCalls: callsOf('unsafe', [1, 2, 3]) },
      { toolCalls: callsOf('safe', [4, 5, 6, 7]) },
      { content: 'ok' },
    ]);
    const agent = createAgent({ name: 'a', tools: [unsafe.tool, safe.tool] });
    const outcome = await run(agent, 'go', { llm, maxParallelTools: 2 });
    expect(outcome.answer).toBe('ok');
    expect(unsafe.stats.peak).toBe(1);
    expect(safe.stats.started).toEqual([4, 5, 6, 7]);
    expect(safe.stats.peak).toBe(2);
  });

  it('the cap holds turn after turn: calls of a later turn run too, still at most the cap at once', async () => {
    const { tool, stats } = concurrencyProbe(true);
    const llm = scriptedLlm([
      { toolCalls: callsOf('safe', [1, 2, 3]) },
      { toolCalls: callsOf('safe', [4, 5, 6]) },
      { content: 'ok' },
    ]);
    const outcome = await run(createAgent({ name: 'a', tools: [tool] }), 'go', { llm, maxParallelTools: 2 });
    expect(outcome.answer).toBe('ok');
    expect(stats.started).toHaveLength(6);
    expect(stats.peak).toBe(2);
  });

  it('a call waiting for approval does not keep the parallel-safe calls of its turn from running together', async () => {
    const { tool, stats } = concurrencyProbe(true);
    const ran: string[] = [];
    const llm = scriptedLlm([
      { toolCalls: [...callsOf('safe', [1, 2, 3]), { name: 'deploy', arguments: { env: 'prod' } }] },
      { content: 'ok' },
    ]);
    const agent = createAgent({ name: 'a', tools: [tool, deploy(ran)] });
    const outcome = await run(agent, 'go', { llm, onApproval: () => true });
    expect(stats.peak).toBe(3);
    expect(ran).toEqual(['prod']);
    expect(toolMessages(outcome.state)).toEqual(['safe 1', 'safe 2', 'safe 3', 'deployed to prod']);
  });

  it('each call sees the data the previous call of its tool left, within a turn and across runs', async () => {
    const counter = defineTool({
      name: 'counter',
      description: 'Counts',
      parameters: z.object({}),
      execute: (_args, scope) => {
        const next = ((scope.data as number | undefined) ?? 0) + 1;
        scope.setData(next);
        return String(next);
      },
    });
    const agent = createAgent({ name: 'a', tools: [counter] });
    const three = { toolCalls: [{ name: 'counter' }, { name: 'counter' }, { name: 'counter' }] };
    const first = await run(agent, 'go', { llm: scriptedLlm([three, { content: 'ok' }]) });
    expect(toolMessages(first.state)).toEqual(['1', '2', '3']);
    expect(first.state.toolData).toEqual({ counter: 3 });
    const second = await run(agent, 'again', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'counter' }] }, { content: 'ok' }]),
      state: first.state,
    });
    expect(toolMessages(second.state).at(-1)).toBe('4');
  });

  it('a call to a tool the agent lists but has no implementation for names the tools available', async () => {
    const ghost = defineTool({
      name: 'ghost',
      description: 'Listed only',
      parameters: z.object({}),
      execute: () => 'x',
    });
    const agent: Agent = { config: defineAgent({ name: 'a', tools: [echo.spec, ghost.spec] }), tools: [echo as Tool] };
    const llm = scriptedLlm([{ toolCalls: [{ name: 'ghost' }] }, { content: 'ok' }]);
    const outcome = await run(agent, 'go', { llm });
    expect(toolMessages(outcome.state)).toEqual([
      "Error: the tool 'ghost' is not available. Available tools: echo, ghost.",
    ]);
  });

  it('a call whose arguments make the tool’s schema throw is answered with an error, and the run goes on', async () => {
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'Fetch',
      parameters: z.object({ url: z.string().transform((url) => new URL(url).host) }),
      execute: ({ url }) => url,
    });
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'fetch_page', arguments: { url: 'not a url' } }] },
      { content: 'I will ask for a proper URL.' },
    ]);
    const outcome = await run(createAgent({ name: 'a', tools: [fetchPage] }), 'go', { llm });
    expect(outcome).toMatchObject({ status: 'finished', answer: 'I will ask for a proper URL.' });
    expect(toolMessages(outcome.state)).toEqual([
      expect.stringMatching(/^Error: invalid arguments for [a-z_]*:\n.*Invalid URL/),
    ]);
  });

  it('uses the run’s time limit for calls without their own', async () => {
    const hang = defineTool({
      name: 'hang',
      description: 'Never returns',
      parameters: z.object({}),
      execute: () => new Promise<string>(() => {}),
    });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'hang' }] }, { content: 'ok' }]);
    const outcome = await run(createAgent({ name: 'a', tools: [hang] }), 'go', { llm, toolTimeoutMs: 15 });
    expect(toolMessages(outcome.state)).toEqual(['Error: hang timed out after 15 ms and was stopped.']);
  });

  it('progress a tool saves is in the run’s state while it runs, with the usage spent so far', async () => {
    const checkpoints: AgentState[] = [];
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'long' }], usage: { inputTokens: 1, outputTokens: 1 } },
      { content: 'inner', usage: { inputTokens: 10, outputTokens: 5 } },
      { content: 'ok', usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
    const long = defineTool({
      name: 'long',
      description: 'Reports progress',
      parameters: z.object({}),
      execute: async (_args, scope) => {
        await scope.llm.complete({ messages: [], tools: [], toolChoice: 'none' });
        scope.saveProgress({ done: 1 });
        return 'finished';
      },
    });
    const outcome = await run(createAgent({ name: 'a', tools: [long] }), 'go', {
      llm,
      checkpoint: (state) => void checkpoints.push(state),
    });
    const during = checkpoints.find((s) => s.turn?.calls[0]?.progress !== undefined);
    expect(during?.turn?.calls[0]?.progress).toEqual({ done: 1 });
    expect(during?.usage).toEqual({ inputTokens: 11, outputTokens: 6, llmCalls: 2 });
    // Counted once: with the progress, not again with the result.
    expect(outcome.usage).toEqual({ inputTokens: 12, outputTokens: 7, llmCalls: 3 });
  });

  it('observations are announced in order, before the request of their step', async () => {
    const emitter = createRunEmitter();
    const seen: string[] = [];
    emitter.on('observation', (item) => seen.push(`observation ${item.observation.kind}`));
    emitter.on('effect', (item) => seen.push(`effect ${item.effect.type}`));
    const agent = createAgent({ name: 'a', tools: [echo], policies: defaultPolicies({ maxSteps: 4 }) });
    await run(agent, 'go', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { content: 'ok' }]),
      emitter,
    });
    expect(seen).toEqual([
      'observation stepStarted',
      'effect callLlm',
      'effect callTool',
      'observation stepStarted',
      'effect callLlm',
    ]);
  });
});

describe('the driver under an agent run', () => {
  const agent = createAgent({ name: 'a' });

  it('a performer that throws fails the run, naming the performer', async () => {
    const outcome = await run(agent, 'hi', {
      llm: scriptedLlm([]),
      performers: {
        callLlm: () => {
          throw new Error('not wired up');
        },
      },
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      finishReason: 'error',
      error: { code: 'PERFORMER_THREW', message: 'the callLlm performer threw: not wired up' },
    });
  });

  it('a performer whose promise rejects fails the run the same way', async () => {
    const outcome = await run(agent, 'hi', {
      llm: scriptedLlm([]),
      performers: { callLlm: () => Promise.reject('gone') },
    });
    expect(outcome.error?.message).toBe('the callLlm performer threw: gone');
  });

  it('an event the reducer rejects fails the run with the reducer’s reason', async () => {
    const strict: StepFunction = (config, state, event) => {
      if (event.type === 'llmResponded') throw new InvalidEventError('this reply makes no sense');
      return step(config, state, event);
    };
    const outcome = await run(createAgent({ name: 'a', step: strict }), 'hi', {
      llm: scriptedLlm([{ content: 'hello' }]),
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      finishReason: 'error',
      error: { code: 'INVALID_EVENT', message: 'the reducer rejected an event: this reply makes no sense' },
    });
  });

  it('an emitter listener that throws stops the run as failed, with the listener’s error', async () => {
    const emitter = createRunEmitter();
    emitter.on('event', () => {
      throw new Error('the dashboard is down');
    });
    const llm = scriptedLlm([{ content: 'never asked' }]);
    const saved: AgentState[] = [];
    const outcome = await run(agent, 'hi', { llm, emitter, checkpoint: (s) => void saved.push(s) });
    expect(outcome).toMatchObject({
      status: 'failed',
      finishReason: 'error',
      error: { code: 'INTERNAL', message: "the run's shell failed: the dashboard is down" },
      pending: [],
    });
    // Stopped at the first transition: nothing performed or saved after it.
    expect(llm.requests).toHaveLength(0);
    expect(saved).toHaveLength(0);
  });

  it('a run stopped by a failing listener while it waits for a person lists nothing to answer', async () => {
    const emitter = createRunEmitter();
    emitter.on('event', (item) => {
      if (item.state.status === 'awaiting_approval') throw new Error('the dashboard is down');
    });
    const agent = createAgent({ name: 'a', tools: [deploy()] });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }]);
    const outcome = await run(agent, 'ship', { llm, emitter });
    expect(outcome.state.status).toBe('awaiting_approval');
    expect(outcome).toMatchObject({
      status: 'failed',
      finishReason: 'error',
      error: { code: 'INTERNAL', message: "the run's shell failed: the dashboard is down" },
      pending: [],
    });
  });

  it('items a tool announces after the run has returned reach no one', async () => {
    let kept: RunScope | undefined;
    const lingering = defineTool({
      name: 'lingering',
      description: 'Keeps its scope',
      parameters: z.object({}),
      execute: (_args, scope) => {
        kept = scope;
        return 'ok';
      },
    });
    const emitter = createRunEmitter();
    const heard: string[] = [];
    emitter.on('observation', (item) => heard.push(item.observation.kind));
    const llm = scriptedLlm([{ toolCalls: [{ name: 'lingering' }] }, { content: 'done' }]);
    await run(createAgent({ name: 'a', tools: [lingering] }), 'go', { llm, emitter });
    const during = heard.length;
    kept?.emit({ type: 'observation', observation: { kind: 'memoryTrimmed', dropped: 1, shrunk: 0 } });
    expect(heard).toHaveLength(during);
    expect(heard).not.toContain('memoryTrimmed');
  });

  it('performers made from the defaults wrap them: the default still does the work', async () => {
    const seen: string[] = [];
    const outcome = await run(agent, 'hi', {
      llm: scriptedLlm([{ content: 'wrapped' }]),
      performers: (defaults) => ({
        callLlm: (effect, context) => {
          seen.push(effect.id);
          return defaults.callLlm(effect, context);
        },
      }),
    });
    expect(outcome.answer).toBe('wrapped');
    expect(seen).toEqual(['llm-1']);
  });

  it('an effect that answers synchronously is applied like any other', async () => {
    const outcome = await run(agent, 'hi', {
      llm: scriptedLlm([]),
      performers: {
        callLlm: (effect) => ({ type: 'llmResponded', effectId: effect.id, content: 'sync', toolCalls: [] }),
      },
    });
    expect(outcome.answer).toBe('sync');
  });
});

describe('drive', () => {
  type Counter = { readonly n: number; readonly done: boolean; readonly note?: string };
  type CounterEvent = { type: 'add'; by: number } | { type: 'stop'; note: string };
  const counter = (steps: CounterEvent[]) => ({
    step: (state: Counter, event: CounterEvent): readonly [Counter, readonly { type: 'noop' }[]] => {
      steps.push(event);
      if (state.done) return [state, []];
      if (event.type === 'stop') return [{ ...state, done: true, note: event.note }, []];
      const n = state.n + event.by;
      return [{ n, done: n >= 10 }, []];
    },
    isFinal: (state: Counter) => state.done,
    cancelled: (note: string): CounterEvent => ({ type: 'stop', note }),
    faulted: (error: RunError): CounterEvent => ({ type: 'stop', note: `fault: ${error.message}` }),
  });

  it('a dispatch after the run has ended is ignored: no step, no save, no announcement', async () => {
    const steps: CounterEvent[] = [];
    const saved: Counter[] = [];
    const announced: unknown[] = [];
    let control: { dispatch(event: CounterEvent): Promise<void>; state(): Counter } | undefined;
    const { state } = await drive(
      {
        machine: counter(steps),
        performers: {},
        attach: (c) => {
          control = c;
        },
        save: (s) => void saved.push(s),
        announce: (item) => void announced.push(item),
      },
      { n: 0, done: false },
      { type: 'add', by: 10 },
    );
    expect(state).toEqual({ n: 10, done: true });
    const counts = [steps.length, saved.length, announced.length];
    await control?.dispatch({ type: 'add', by: 5 });
    expect([steps.length, saved.length, announced.length]).toEqual(counts);
    expect(control?.state()).toBe(state);
  });

  it('events dispatched while a run waits are applied in order, each saved', async () => {
    const steps: CounterEvent[] = [];
    const saved: number[] = [];
    let control: { dispatch(event: CounterEvent): Promise<void>; signal: AbortSignal } | undefined;
    let release: () => void = () => {};
    const driven = drive(
      {
        machine: {
          ...counter(steps),
          step: (state: Counter, event: CounterEvent) => {
            const [next] = counter(steps).step(state, event);
            return [next, next.done ? [] : [{ type: 'wait' as const }]] as const;
          },
        },
        performers: { wait: () => new Promise<undefined>((resolve) => (release = () => resolve(undefined))) },
        attach: (c) => {
          control = c;
        },
        save: (s) => void saved.push(s.n),
      },
      { n: 0, done: false },
      { type: 'add', by: 1 },
    );
    await control?.dispatch({ type: 'add', by: 2 });
    await control?.dispatch({ type: 'add', by: 3 });
    expect(control?.signal.aborted).toBe(false);
    await control?.dispatch({ type: 'add', by: 4 });
    expect(control?.signal.aborted).toBe(true);
    release();
    const { state } = await driven;
    expect(state).toEqual({ n: 10, done: true });
    expect(saved).toEqual([1, 3, 6, 10]);
  });

  it('a host callback that throws while announcing ends the drive with the fault, unsaved', async () => {
    const saved: Counter[] = [];
    const result = await drive(
      {
        machine: counter([]),
        performers: {},
        announce: () => {
          throw new Error('listener broke');
        },
        save: (s) => void saved.push(s),
      },
      { n: 0, done: false },
      { type: 'add', by: 1 },
    );
    expect(result).toEqual({
      state: { n: 1, done: false },
      fault: { code: 'INTERNAL', message: "the run's shell failed: listener broke" },
    });
    expect(saved).toEqual([]);
  });
});
