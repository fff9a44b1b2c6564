import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Agent, createAgent } from '../src/kernel/agent.js';
import type { LlmRequest } from '../src/kernel/effects.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import type { AgentState } from '../src/kernel/state.js';
import { agentTool } from '../src/shell/agentTool.js';
import { resume, resumeWith, run, stream } from '../src/shell/run.js';
import { createRunEmitter, type ItemOrigin, type RunItem } from '../src/shell/runItems.js';
import type { ScriptedReply } from '../src/testing/script.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { askHuman } from '../src/tools/askHuman.js';
import { defineTool, type Tool } from '../src/tools/defineTool.js';

const PARENT_PROMPT = 'You are the parent. Hand research to the researcher.';
const CHILD_PROMPT = 'You are the researcher.';
const GRANDCHILD_PROMPT = 'You are the librarian.';

type Who = 'parent' | 'child' | 'grandchild';

const whoAsked = (request: LlmRequest): Who => {
  const system = request.messages[0]?.content;
  if (system === PARENT_PROMPT) return 'parent';
  if (system === CHILD_PROMPT) return 'child';
  if (system === GRANDCHILD_PROMPT) return 'grandchild';
  throw new Error(`a request from nobody known: ${String(system)}`);
};

/** How many replies the asker already got in this task: its step, counted from 0. */
const turnOf = (request: LlmRequest) => request.messages.filter((m) => m.role === 'assistant').length;

const lastToolResult = (request: LlmRequest) => request.messages.filter((m) => m.role === 'tool').at(-1)?.content;

type Replies = Partial<Record<Who, (turn: number, request: LlmRequest) => ScriptedReply>>;

/**
 * One scripted model for every agent of the test: it tells them apart by their system prompt
 * and answers by how far each has got, so a request sent again gets the same reply.
 */
function modelFor(replies: Replies) {
  return scriptedLlm((request) => {
    const who = whoAsked(request);
    const reply = replies[who];
    if (!reply) throw new Error(`no replies scripted for the ${who}`);
    return reply(turnOf(request), request);
  });
}

const requestsOf = (llm: { requests: readonly LlmRequest[] }, who: Who, turn?: number) =>
  llm.requests.filter((r) => whoAsked(r) === who && (turn === undefined || turnOf(r) === turn));

/** The parent hands `task` to the researcher, then reports what came back. */
const parentReplies =
  (task = 'Find the capital of France.') =>
  (turn: number, request: LlmRequest): ScriptedReply =>
    turn === 0
      ? { toolCalls: [{ name: 'researcher', arguments: { task } }], usage: { inputTokens: 10, outputTokens: 1 } }
      : { content: `Parent reports: ${lastToolResult(request)}`, usage: { inputTokens: 20, outputTokens: 2 } };

function lookupTool(log: string[]): Tool {
  return defineTool({
    name: 'lookup',
    description: 'Look something up',
    parameters: z.object({ q: z.string() }),
    execute: ({ q }) => {
      log.push(q);
      return `found ${q}`;
    },
  });
}

function researcher(tools: Tool[]): Agent {
  return createAgent({
    name: 'researcher',
    systemPrompt: CHILD_PROMPT,
    tools,
    policies: defaultPolicies({ maxSteps: 10 }),
    tokenizer: 'estimate',
  });
}

/** A parent whose one tool is the child agent (or a tool made from it). */
function parentOf(child: Agent | Tool): Agent {
  const tool = 'config' in child ? agentTool(child) : child;
  return createAgent({
    name: 'parent',
    systemPrompt: PARENT_PROMPT,
    tools: [tool],
    policies: defaultPolicies({ maxSteps: 10 }),
    tokenizer: 'estimate',
  });
}

/** The child looks up "paris", then answers. */
const childLooksUp = (turn: number): ScriptedReply =>
  turn === 0
    ? { toolCalls: [{ name: 'lookup', arguments: { q: 'paris' } }], usage: { inputTokens: 100, outputTokens: 10 } }
    : { content: 'The capital is Paris.', usage: { inputTokens: 200, outputTokens: 20 } };

// The tool call that ran the child, with the child agent and its model (the parent's port here).
const CHILD_ORIGIN: readonly ItemOrigin[] = [
  { tool: 'researcher', effectId: 'running-1-0', agent: 'researcher', model: 'scripted' },
];

/** Resolves once `signal` has aborted (at once if it already has). */
const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const childOf = (state: AgentState | undefined) => state?.turn?.calls[0]?.progress as AgentState | undefined;

describe('agentTool: a child agent as a tool', () => {
  it('runs the child on the task the parent’s model gives, and the child’s answer is the parent’s observation', async () => {
    const looked: string[] = [];
    const llm = modelFor({ parent: parentReplies(), child: childLooksUp });
    const outcome = await run(parentOf(researcher([lookupTool(looked)])), 'What is the capital of France?', { llm });

    expect(outcome).toMatchObject({ status: 'finished', answer: 'Parent reports: The capital is Paris.' });
    expect(looked).toEqual(['paris']);
    const childFirst = requestsOf(llm, 'child', 0)[0];
    expect(childFirst?.messages.find((m) => m.role === 'user')?.content).toBe('Find the capital of France.');
    expect(childFirst?.tools.map((t) => t.name)).toEqual(['lookup']);
    expect(outcome.state.messages.filter((m) => m.role === 'tool')).toEqual([
      expect.objectContaining({ name: 'researcher', content: 'The capital is Paris.' }),
    ]);
    // The parent's model saw the child as a tool taking a task.
    const offered = requestsOf(llm, 'parent', 0)[0]?.tools.find((t) => t.name === 'researcher');
    expect(offered?.parameters).toMatchObject({ properties: { task: { type: 'string' } }, required: ['task'] });
  });

  it('names the tool after the agent in snake_case unless told otherwise', () => {
    const child = createAgent({ name: 'WebResearcher', description: 'Researches the web' });
    expect(agentTool(child).spec).toMatchObject({ name: 'web_researcher', description: 'Researches the web' });
    expect(agentTool(createAgent({ name: 'Data analyst' })).spec.name).toBe('data_analyst');
    expect(agentTool(createAgent({ name: 'HTTPFetcher' })).spec.name).toBe('http_fetcher');
    expect(agentTool(createAgent({ name: 'research-bot 2' })).spec.name).toBe('research_bot_2');
    expect(agentTool(child, { name: 'web', description: 'Search' }).spec).toMatchObject({
      name: 'web',
      description: 'Search',
    });
  });

  it('snake_case collapses runs of other characters, trims underscores, and falls back to "agent"', () => {
    expect(agentTool(createAgent({ name: 'Data  --  analyst' })).spec.name).toBe('data_analyst');
    expect(agentTool(createAgent({ name: '__private agent__' })).spec.name).toBe('private_agent');
    expect(agentTool(createAgent({ name: '¿¡!' })).spec.name).toBe('agent');
  });

  it('describes itself and its task after the child, and gives the child 30 minutes unless told otherwise', () => {
    const spec = agentTool(createAgent({ name: 'Researcher' })).spec;
    expect(spec.description).toBe('Hand a task to the Researcher agent.');
    expect(spec.parameters).toMatchObject({
      properties: { task: { description: 'The task for Researcher, with everything it needs.' } },
    });
    expect(spec.timeoutMs).toBe(30 * 60_000);
    expect(agentTool(createAgent({ name: 'Researcher' }), { timeoutMs: 5_000 }).spec.timeoutMs).toBe(5_000);
  });

  it('the child runs in the parent’s workspace, under a run id naming the parent run and the call', async () => {
    const seen: { workspace?: string; runId: string }[] = [];
    const where = defineTool({
      name: 'where',
      description: 'Where am I',
      parameters: z.object({}),
      execute: (_args, scope) => {
        seen.push({ workspace: scope.workspace, runId: scope.runId });
        return 'here';
      },
    });
    const llm = modelFor({
      parent: parentReplies(),
      child: (turn) => (turn === 0 ? { toolCalls: [{ name: 'where', arguments: {} }] } : { content: 'Done.' }),
    });
    await run(parentOf(researcher([where])), 'go', { llm, workspace: '/srv/work', runId: 'job-7' });
    expect(seen).toEqual([{ workspace: '/srv/work', runId: 'job-7/running-1-0' }]);
  });

  it('the child’s items reach the parent’s emitter tagged with their origin; the parent’s own items have none', async () => {
    const llm = modelFor({ parent: parentReplies(), child: childLooksUp });
    const emitter = createRunEmitter();
    const items: RunItem[] = [];
    for (const type of ['effect', 'event', 'observation', 'result'] as const) {
      emitter.on(type, (item: RunItem) => void items.push(item));
    }
    const outcome = await run(parentOf(researcher([lookupTool([])])), 'capital?', { llm, emitter });

    const fromChild = items.filter((item) => item.origin !== undefined);
    const own = items.filter((item) => item.origin === undefined);
    expect(fromChild.length).toBeGreaterThan(0);
    for (const item of fromChild) expect(item.origin).toEqual(CHILD_ORIGIN);
    // The child's whole run: its start, its model replies, its tool, its result.
    const childEvents = fromChild.flatMap((item) => (item.type === 'event' ? [item.event.type] : []));
    expect(childEvents).toEqual(['started', 'llmResponded', 'toolCompleted', 'llmResponded']);
    expect(fromChild.find((i) => i.type === 'event')).toMatchObject({
      event: { type: 'started', input: 'Find the capital of France.' },
    });
    expect(fromChild.some((i) => i.type === 'effect' && i.effect.type === 'callTool')).toBe(true);
    expect(fromChild.at(-1)).toMatchObject({ type: 'result', result: { answer: 'The capital is Paris.' } });
    // The parent's own items are its own run, in order, with its result last.
    const ownEvents = own.flatMap((item) => (item.type === 'event' ? [item.event.type] : []));
    expect(ownEvents.filter((type) => type !== 'toolProgressed')).toEqual([
      'started',
      'llmResponded',
      'toolCompleted',
      'llmResponded',
    ]);
    expect(items.at(-1)).toEqual({ type: 'result', result: outcome });
    // The child's items come while the parent's call runs: after the call starts, before it completes.
    const callStarts = items.findIndex((i) => !i.origin && i.type === 'effect' && i.effect.type === 'callTool');
    const callEnds = items.findIndex((i) => !i.origin && i.type === 'event' && i.event.type === 'toolCompleted');
    const childIndexes = items.flatMap((item, index) => (item.origin ? [index] : []));
    expect(Math.min(...childIndexes)).toBeGreaterThan(callStarts);
    expect(Math.max(...childIndexes)).toBeLessThan(callEnds);
  });

  it('the child’s items reach the parent’s stream, tagged; the last item is the parent’s own result', async () => {
    const llm = modelFor({ parent: parentReplies(), child: childLooksUp });
    const items: RunItem[] = [];
    for await (const item of stream(parentOf(researcher([lookupTool([])])), 'capital?', { llm })) items.push(item);

    const fromChild = items.filter((item) => item.origin !== undefined);
    expect(fromChild.map((i) => i.origin)).toEqual(fromChild.map(() => CHILD_ORIGIN));
    expect(fromChild.filter((i) => i.type === 'event')).toHaveLength(4);
    expect(fromChild.filter((i) => i.type === 'result')).toHaveLength(1);
    const last = items.at(-1);
    expect(last?.origin).toBeUndefined();
    expect(last).toMatchObject({ type: 'result', result: { answer: 'Parent reports: The capital is Paris.' } });
  });

  it('items of a grandchild carry the whole path, outermost first', async () => {
    const librarian = createAgent({ name: 'librarian', systemPrompt: GRANDCHILD_PROMPT, tokenizer: 'estimate' });
    const child = researcher([agentTool(librarian)]);
    const llm = modelFor({
      parent: parentReplies(),
      child: (turn, request) =>
        turn === 0
          ? { toolCalls: [{ name: 'librarian', arguments: { task: 'Find the atlas.' } }] }
          : { content: `Via the librarian: ${lastToolResult(request)}` },
      grandchild: () => ({ content: 'The atlas says Paris.' }),
    });
    const items: RunItem[] = [];
    const emitter = createRunEmitter();
    emitter.on('result', (item) => void items.push(item));
    const outcome = await run(parentOf(child), 'capital?', { llm, emitter });

    expect(outcome.answer).toBe('Parent reports: Via the librarian: The atlas says Paris.');
    expect(items.map((item) => item.origin ?? [])).toEqual([
      [...CHILD_ORIGIN, { tool: 'librarian', effectId: 'running-1-0', agent: 'librarian', model: 'scripted' }],
      CHILD_ORIGIN,
      [],
    ]);
  });

  it('the child’s model use counts in the parent’s usage when it uses the parent’s port', async () => {
    const llm = modelFor({ parent: parentReplies(), child: childLooksUp });
    const outcome = await run(parentOf(researcher([lookupTool([])])), 'capital?', { llm });

    expect(llm.requests).toHaveLength(4);
    // Parent: 10+20 in, 1+2 out, 2 calls; child: 100+200 in, 10+20 out, 2 calls.
    expect(outcome.usage).toEqual({ inputTokens: 330, outputTokens: 33, llmCalls: 4 });
    expect(outcome.state.usage).toEqual(outcome.usage);
  });

  it('the child’s model use counts in the parent’s usage when it has a port of its own', async () => {
    const parentLlm = modelFor({ parent: parentReplies() });
    const childLlm = scriptedLlm((request) => childLooksUp(turnOf(request)), 'child-model');
    const tool = agentTool(researcher([lookupTool([])]), { llm: childLlm });
    const origins: (readonly ItemOrigin[] | undefined)[] = [];
    const emitter = createRunEmitter();
    emitter.on('result', (item) => void origins.push(item.origin));
    const outcome = await run(parentOf(tool), 'capital?', { llm: parentLlm, emitter });

    expect(outcome.answer).toBe('Parent reports: The capital is Paris.');
    // The child's items name the model it ran on, not the parent's.
    expect(origins[0]).toEqual([{ ...CHILD_ORIGIN[0], model: 'child-model' }]);
    expect(parentLlm.requests.map(whoAsked)).toEqual(['parent', 'parent']);
    expect(childLlm.requests.map(whoAsked)).toEqual(['child', 'child']);
    expect(outcome.usage).toEqual({ inputTokens: 330, outputTokens: 33, llmCalls: 4 });
  });

  it('the parent’s checkpoints carry the child’s state while it runs', async () => {
    const llm = modelFor({ parent: parentReplies(), child: childLooksUp });
    const checkpoints: AgentState[] = [];
    const childStates: AgentState[] = [];
    const emitter = createRunEmitter();
    emitter.on('event', (item) => {
      if (item.origin) childStates.push(item.state);
    });
    await run(parentOf(researcher([lookupTool([])])), 'capital?', {
      llm,
      emitter,
      checkpoint: (state) => void checkpoints.push(roundTrip(state)),
    });

    const progress = checkpoints.flatMap((state) => {
      const child = childOf(state);
      return child ? [child] : [];
    });
    // Every state the child reached was saved in the parent, in order, as JSON.
    expect(progress).toEqual(roundTrip(childStates));
    expect(progress.map((state) => state.status)).toEqual([
      'awaiting_llm',
      'awaiting_tools',
      'awaiting_llm',
      'finished',
    ]);
    expect(progress[0]?.messages).toEqual([{ role: 'user', content: 'Find the capital of France.' }]);
    // Once the call has answered, the child's state is no longer kept.
    expect(checkpoints.at(-1)?.turn).toBeUndefined();
    expect(JSON.stringify(checkpoints.at(-1))).not.toContain('"progress"');
  });

  /**
   * The child looks up "a", then "b", then answers. The first try of "b" records progress, and
   * the parent's checkpoint of that progress throws: the parent ends as failed mid-child, and
   * the run is stopped while "b" is still running.
   */
  async function crashMidChild() {
    const started: string[] = [];
    let halted = 0;
    const lookup = defineTool({
      name: 'lookup',
      description: 'Look something up',
      parameters: z.object({ q: z.string() }),
      execute: async ({ q }, scope) => {
        started.push(q);
        if (q === 'b' && started.filter((s) => s === 'b').length === 1) {
          scope.saveProgress('halfway');
          await untilAborted(scope.signal);
          halted++;
          return 'stopped';
        }
        return `found ${q}`;
      },
    });
    const llm = modelFor({
      parent: parentReplies(),
      child: (turn, request) =>
        turn < 2
          ? {
              toolCalls: [{ name: 'lookup', arguments: { q: turn === 0 ? 'a' : 'b' } }],
              usage: { inputTokens: 100, outputTokens: 10 },
            }
          : {
              content: `Answer from ${request.messages.filter((m) => m.role === 'tool').length} lookups.`,
              usage: { inputTokens: 100, outputTokens: 10 },
            },
    });
    const parent = parentOf(researcher([lookup]));
    let saved = '';
    const first = await run(parent, 'capital?', {
      llm,
      checkpoint: (state) => {
        if (childOf(state)?.turn?.calls[0]?.progress === 'halfway') throw new Error('disk full');
        saved = JSON.stringify(state);
      },
    });
    return { first, saved: JSON.parse(saved) as AgentState, llm, parent, started, halted: () => halted };
  }

  it('a parent that crashed mid-child resumes the child where it was: nothing answered is asked or done again', async () => {
    const { first, saved, llm, parent, started, halted } = await crashMidChild();

    expect(first).toMatchObject({ status: 'failed', finishReason: 'error' });
    expect(first.error?.message).toMatch(/could not save a checkpoint: disk full/);
    expect(halted()).toBe(1);
    const child = childOf(saved);
    expect(child?.status).toBe('awaiting_tools');
    expect(child?.turn?.calls.map((c) => [c.call.name, c.args, c.phase])).toEqual([['lookup', { q: 'b' }, 'running']]);
    expect(requestsOf(llm, 'child')).toHaveLength(2);

    const resumed = await resume(parent, saved, { llm });
    expect(resumed).toMatchObject({ status: 'finished', answer: 'Parent reports: Answer from 2 lookups.' });
    // The child's answered requests were not sent again; its completed lookup was not repeated.
    expect(requestsOf(llm, 'child', 0)).toHaveLength(1);
    expect(requestsOf(llm, 'child', 1)).toHaveLength(1);
    expect(requestsOf(llm, 'child', 2)).toHaveLength(1);
    expect(requestsOf(llm, 'parent', 0)).toHaveLength(1);
    expect(started).toEqual(['a', 'b', 'b']);
    const childTools = requestsOf(llm, 'child', 2)[0]?.messages.filter((m) => m.role === 'tool');
    expect(childTools?.map((m) => m.content)).toEqual(['found a', 'found b']);
  });

  it('after a crash and resume, every model call the child’s state records counts once in the parent’s usage', async () => {
    const { saved, llm, parent } = await crashMidChild();
    const resumed = await resume(parent, saved, { llm });
    expect(resumed.state.messages.filter((m) => m.role === 'assistant')).toHaveLength(2);
    // The parent's two calls (10+20 in, 1+2 out) and the three the child made and kept (two before the crash).
    expect(resumed.usage).toEqual({ inputTokens: 330, outputTokens: 33, llmCalls: 5 });
  });

  it('cancelling the parent stops the child; nothing of the child runs after', async () => {
    const controller = new AbortController();
    let childToolStopped = false;
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until stopped',
      parameters: z.object({}),
      execute: async (_args, scope) => {
        controller.abort('the user left');
        await untilAborted(scope.signal);
        childToolStopped = scope.signal.aborted;
        return 'stopped';
      },
    });
    const llm = modelFor({
      parent: parentReplies(),
      child: (turn) => (turn === 0 ? { toolCalls: [{ name: 'wait' }] } : { content: 'never' }),
    });
    const outcome = await run(parentOf(researcher([wait])), 'capital?', { llm, signal: controller.signal });

    expect(outcome).toMatchObject({ status: 'finished', finishReason: 'cancelled' });
    expect(childToolStopped).toBe(true);
    expect(requestsOf(llm, 'child')).toHaveLength(1);
    expect(outcome.state.messages.at(-1)).toMatchObject({ role: 'tool', name: 'researcher' });
  });

  it('once the parent’s run has returned, no item of its stopped child reaches the parent’s emitter', async () => {
    const controller = new AbortController();
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until stopped',
      parameters: z.object({}),
      execute: async (_args, scope) => {
        controller.abort('the user left');
        await untilAborted(scope.signal);
        return 'stopped';
      },
    });
    const llm = modelFor({
      parent: parentReplies(),
      child: (turn) => (turn === 0 ? { toolCalls: [{ name: 'wait' }] } : { content: 'never' }),
    });
    // The child's tool, with a way to know when the child's run has wholly ended.
    const inner = agentTool(researcher([wait]));
    let childEnded: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      childEnded = resolve;
    });
    const tool: Tool<{ task: string }> = {
      ...inner,
      execute: async (args, scope) => {
        try {
          return await inner.execute(args, scope);
        } finally {
          childEnded();
        }
      },
    };
    const items: RunItem[] = [];
    const emitter = createRunEmitter();
    for (const type of ['effect', 'event', 'observation', 'result'] as const) {
      emitter.on(type, (item: RunItem) => void items.push(item));
    }
    const outcome = await run(parentOf(tool), 'capital?', { llm, signal: controller.signal, emitter });
    await ended;

    expect(outcome.finishReason).toBe('cancelled');
    const result = items.findIndex((item) => item.type === 'result' && !item.origin);
    expect(items.slice(result + 1)).toEqual([]);
  });

  it('a child slower than the tool’s time limit is stopped and reported to the parent', async () => {
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until stopped',
      parameters: z.object({}),
      execute: async (_args, scope) => {
        await untilAborted(scope.signal);
        return 'stopped';
      },
    });
    const llm = modelFor({
      parent: parentReplies(),
      child: (turn) => (turn === 0 ? { toolCalls: [{ name: 'wait' }] } : { content: 'never' }),
    });
    const tool = agentTool(researcher([wait]), { timeoutMs: 50 });
    const outcome = await run(parentOf(tool), 'capital?', { llm });

    expect(outcome.status).toBe('finished');
    expect(outcome.answer).toBe('Parent reports: Error: researcher timed out after 50 ms and was stopped.');
  });

  describe('a child tool that needs approval', () => {
    /** A deploy tool that needs approval, recording where it deployed. */
    function deployTool(deployed: string[]): Tool {
      return defineTool({
        name: 'deploy',
        description: 'Deploy',
        parameters: z.object({ env: z.string() }),
        needsApproval: true,
        execute: ({ env }) => {
          deployed.push(env);
          return `deployed to ${env}`;
        },
      });
    }

    /** The child deploys to prod, then reports what the deploy said. */
    const childDeploys = (turn: number, request: LlmRequest): ScriptedReply =>
      turn === 0
        ? {
            toolCalls: [{ name: 'deploy', arguments: { env: 'prod' }, id: 'call_deploy' }],
            usage: { inputTokens: 100, outputTokens: 10 },
          }
        : { content: `Deploy said: ${lastToolResult(request)}`, usage: { inputTokens: 200, outputTokens: 20 } };

    function approvalSetup() {
      const deployed: string[] = [];
      const llm = modelFor({ parent: parentReplies('Deploy to prod.'), child: childDeploys });
      return { deployed, llm, parent: parentOf(researcher([deployTool(deployed)])) };
    }

    it('pauses the parent, lists the input with a path through the call, and continues once approved', async () => {
      const { deployed, llm, parent } = approvalSetup();
      const paused = await run(parent, 'ship it', { llm });

      expect(paused.status).toBe('awaiting_approval');
      expect(paused.pending).toEqual([
        {
          kind: 'approval',
          effectId: 'running-1-0/approval-1-0',
          call: { id: 'call_deploy', name: 'deploy', arguments: '{"env":"prod"}' },
          args: { env: 'prod' },
        },
      ]);
      expect(deployed).toEqual([]);
      const state = roundTrip(paused.state);
      // Resuming without the answer changes nothing: the run still waits.
      const still = await resume(parent, roundTrip(state), { llm });
      expect(still.status).toBe('awaiting_approval');
      expect(still.pending).toEqual(paused.pending);

      const done = await resumeWith(
        parent,
        state,
        { type: 'approvalGiven', effectId: 'running-1-0/approval-1-0' },
        { llm },
      );
      expect(done).toMatchObject({ status: 'finished', answer: 'Parent reports: Deploy said: deployed to prod' });
      expect(deployed).toEqual(['prod']);
      expect(done.state.messages.filter((m) => m.role === 'tool')).toEqual([
        expect.objectContaining({ name: 'researcher', content: 'Deploy said: deployed to prod' }),
      ]);
      // The child's first request was not sent again.
      expect(requestsOf(llm, 'child', 0)).toHaveLength(1);
      // Usage: the parent's two calls and the child's two, the one before the pause included.
      expect(done.usage).toEqual({ inputTokens: 330, outputTokens: 33, llmCalls: 4 });
    });

    it('passes a denial down to the child, reason included', async () => {
      const { deployed, llm, parent } = approvalSetup();
      const paused = await run(parent, 'ship it', { llm });
      const effectId = paused.pending[0]?.effectId ?? '';
      const done = await resumeWith(
        parent,
        roundTrip(paused.state),
        { type: 'approvalDenied', effectId, reason: 'code freeze' },
        { llm },
      );

      expect(deployed).toEqual([]);
      expect(done.answer).toBe('Parent reports: Deploy said: Error: the user did not approve this call: code freeze');
    });

    it('an answer for an input the child does not wait for is refused and changes nothing', async () => {
      const { deployed, llm, parent } = approvalSetup();
      const paused = await run(parent, 'ship it', { llm });
      const saved = roundTrip(paused.state);
      const wrong = resumeWith(parent, saved, { type: 'approvalGiven', effectId: 'running-1-0/approval-9-0' }, { llm });
      await expect(wrong).rejects.toThrow(
        'waits for no approval "running-1-0/approval-9-0" (it waits for: approval running-1-0/approval-1-0)',
      );
      await expect(wrong).rejects.toMatchObject({ name: 'InvalidStateError', code: 'RUN_NOT_WAITING' });
      expect(saved).toEqual(roundTrip(paused.state));
      expect(deployed).toEqual([]);
    });

    it('with a port of its own, the child’s calls before and after the pause count in the parent’s usage', async () => {
      const deployed: string[] = [];
      const childLlm = modelFor({ child: childDeploys });
      const parentLlm = modelFor({ parent: parentReplies('Deploy to prod.') });
      const parent = parentOf(agentTool(researcher([deployTool(deployed)]), { llm: childLlm }));
      const paused = await run(parent, 'ship it', { llm: parentLlm });
      expect(paused.usage).toEqual({ inputTokens: 110, outputTokens: 11, llmCalls: 2 });
      const done = await resumeWith(
        parent,
        roundTrip(paused.state),
        { type: 'approvalGiven', effectId: 'running-1-0/approval-1-0' },
        { llm: parentLlm },
      );
      expect(done.answer).toBe('Parent reports: Deploy said: deployed to prod');
      expect(done.usage).toEqual({ inputTokens: 330, outputTokens: 33, llmCalls: 4 });
      expect(childLlm.requests.map(whoAsked)).toEqual(['child', 'child']);
    });

    it('two children paused in one turn are answered one at a time', async () => {
      const deployed: string[] = [];
      const llm = modelFor({
        parent: (turn, request) =>
          turn === 0
            ? {
                toolCalls: [
                  { name: 'researcher', arguments: { task: 'prod' } },
                  { name: 'researcher', arguments: { task: 'staging' } },
                ],
              }
            : {
                content: request.messages
                  .filter((m) => m.role === 'tool')
                  .map((m) => m.content)
                  .join(' | '),
              },
        child: (turn, request) => {
          const env = request.messages.find((m) => m.role === 'user')?.content ?? '';
          return turn === 0
            ? { toolCalls: [{ name: 'deploy', arguments: { env } }] }
            : { content: `${env}: ${lastToolResult(request)}` };
        },
      });
      const parent = parentOf(researcher([deployTool(deployed)]));
      const paused = await run(parent, 'ship both', { llm });
      expect(paused.pending.map((p) => [p.effectId, p.kind, p.call.arguments])).toEqual([
        ['running-1-0/approval-1-0', 'approval', '{"env":"prod"}'],
        ['running-1-1/approval-1-0', 'approval', '{"env":"staging"}'],
      ]);

      const half = await resumeWith(
        parent,
        roundTrip(paused.state),
        { type: 'approvalDenied', effectId: 'running-1-1/approval-1-0' },
        { llm },
      );
      expect(half.status).toBe('awaiting_approval');
      expect(half.pending.map((p) => p.effectId)).toEqual(['running-1-0/approval-1-0']);
      const done = await resumeWith(
        parent,
        roundTrip(half.state),
        { type: 'approvalGiven', effectId: 'running-1-0/approval-1-0' },
        { llm },
      );
      expect(deployed).toEqual(['prod']);
      expect(done.answer).toBe('prod: deployed to prod | staging: Error: the user did not approve this call.');
    });

    it('a paused parent resumed with onApproval asks it for the child’s approval, as a pause of its own would', async () => {
      const { deployed, llm, parent } = approvalSetup();
      const paused = await run(parent, 'ship it', { llm });
      expect(paused.status).toBe('awaiting_approval');
      const asked: string[] = [];
      const done = await resume(parent, roundTrip(paused.state), {
        llm,
        onApproval: (call) => {
          asked.push(call.name);
          return true;
        },
      });
      expect(asked).toEqual(['deploy']);
      expect(deployed).toEqual(['prod']);
      expect(done).toMatchObject({ status: 'finished', answer: 'Parent reports: Deploy said: deployed to prod' });
    });

    it('uses the parent run’s onApproval instead of pausing', async () => {
      const { deployed, llm, parent } = approvalSetup();
      const asked: unknown[] = [];
      const done = await run(parent, 'ship it', {
        llm,
        onApproval: (call, args) => {
          asked.push([call.name, args]);
          return true;
        },
      });
      expect(done.status).toBe('finished');
      expect(asked).toEqual([['deploy', { env: 'prod' }]]);
      expect(deployed).toEqual(['prod']);
      expect(done.answer).toBe('Parent reports: Deploy said: deployed to prod');
    });
  });

  it('a child waiting for a person pauses the parent; the reply reaches the child', async () => {
    const llm = modelFor({
      parent: parentReplies(),
      child: (turn, request) =>
        turn === 0
          ? { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which country?' } }] }
          : { content: `The user said ${lastToolResult(request)}.` },
    });
    const parent = parentOf(researcher([askHuman]));
    const paused = await run(parent, 'capital?', { llm });
    expect(paused.status).toBe('awaiting_human');
    expect(paused.pending).toEqual([
      expect.objectContaining({ kind: 'human', effectId: 'running-1-0/human-1-0', question: 'Which country?' }),
    ]);
    const done = await resumeWith(
      parent,
      roundTrip(paused.state),
      { type: 'humanReplied', effectId: 'running-1-0/human-1-0', answer: 'France' },
      { llm },
    );
    expect(done.answer).toBe('Parent reports: The user said France.');
  });

  it('a child stopped by its step limit says so to the parent, with what it had', async () => {
    const llm = modelFor({
      parent: parentReplies(),
      child: (turn) => ({
        content: `Still looking (${turn}).`,
        toolCalls: [{ name: 'lookup', arguments: { q: `page ${turn}` } }],
      }),
    });
    const child = createAgent({
      name: 'researcher',
      systemPrompt: CHILD_PROMPT,
      tools: [lookupTool([])],
      policies: defaultPolicies({ maxSteps: 2 }),
      tokenizer: 'estimate',
    });
    const outcome = await run(parentOf(child), 'capital?', { llm });

    expect(outcome.answer).toBe(
      'Parent reports: Still looking (1).\n(researcher stopped before finishing: reached the step limit (2))',
    );
  });

  it('the child’s failure is an error observation for the parent, which goes on', async () => {
    const llm = modelFor({
      parent: parentReplies(),
      child: () => ({ error: { status: 400, message: 'the child’s request was refused' } }),
    });
    const outcome = await run(parentOf(researcher([])), 'capital?', { llm });

    expect(outcome.status).toBe('finished');
    const observation = outcome.state.messages.find((m) => m.role === 'tool');
    expect(observation?.content).toMatch(/^Error: researcher failed: the model request failed: .*refused/);
    expect(outcome.answer).toMatch(/^Parent reports: Error: researcher failed/);
    expect(requestsOf(llm, 'parent')).toHaveLength(2);
  });
});
