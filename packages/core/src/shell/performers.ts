import { runErrorOf } from '../errors.js';
import type { Agent } from '../kernel/agent.js';
import type { AnyEffect, Effect } from '../kernel/effects.js';
import type { AnyEvent } from '../kernel/events.js';
import type { AgentState } from '../kernel/state.js';
import type { LlmDelta } from '../llm/llm.js';
import { messageOf } from '../messageOf.js';
import type { Tool } from '../tools/defineTool.js';
import type { PerformContext, Performer } from './driver.js';
import { answerLlmCall } from './llmCall.js';
import type { RunItem } from './runItems.js';
import type { RunScope } from './scope.js';
import { executeTool, parseArguments } from './toolExecution.js';

/** A performer of one of the agent loop's effects. */
export type AgentPerformer<T extends Effect['type']> = Performer<AgentState, AnyEvent, Extract<Effect, { type: T }>>;

/** How the loop's effects are performed, by effect type; a host may replace any of them per run. */
export type AgentPerformers = { readonly [T in Effect['type']]: AgentPerformer<T> };

/** Performers a host adds or overrides: built-in types, or namespaced types of its own effects. */
export type HostPerformers = Partial<AgentPerformers> & {
  readonly [type: `${string}:${string}`]: Performer<AgentState, AnyEvent, never> | undefined;
};

/** What the performers of one run share. */
export interface PerformerDeps {
  readonly agent: Agent;
  readonly scope: RunScope;
  /** The tool implementations of this run, by name (tools come and go with `scope.changeTools`). */
  readonly tools: ReadonlyMap<string, Tool>;
  readonly announce: (item: RunItem) => void;
  readonly toolTimeoutMs?: number;
  readonly maxParallelTools?: number;
}

/**
 * The default performers of an agent run. A port or callback that throws is answered like a
 * failure of that effect, so the run ends (or goes on) with a reason instead of rejecting.
 */
export function agentPerformers(deps: PerformerDeps): AgentPerformers {
  const { agent, scope } = deps;
  return {
    // Not async: the answer's promise is handed on as it is (an async wrapper adds turns of the microtask queue).
    callLlm: (effect, { signal }) => {
      // Announced as they come, not applied: the state is the same as without streaming.
      const onDelta = scope.takesDeltas?.()
        ? (delta: LlmDelta) => deps.announce({ type: 'delta', effectId: effect.id, ...delta })
        : undefined;
      return answerLlmCall(scope.llm, effect, onDelta ? { signal, onDelta } : { signal });
    },
    gatherContext: async (effect, { signal }) => {
      const gather = agent.contextGatherers?.[effect.provider];
      try {
        if (!gather) throw new Error(`no gatherer is registered for context provider "${effect.provider}"`);
        return { type: 'contextGathered', effectId: effect.id, data: await gather({ ...scope, signal }) };
      } catch (error) {
        return { type: 'contextGathered', effectId: effect.id, error: runErrorOf(error, 'CONTEXT_FAILED') };
      }
    },
    askHuman: async (effect) => {
      if (!scope.onHuman) return undefined;
      try {
        return { type: 'humanReplied', effectId: effect.id, answer: await scope.onHuman(effect.question, effect.call) };
      } catch (error) {
        const answer = `(The question could not be asked: ${messageOf(error)})`;
        return { type: 'humanReplied', effectId: effect.id, answer };
      }
    },
    requestApproval: async (effect) => {
      if (!scope.onApproval) return undefined;
      try {
        const decision = await scope.onApproval(effect.call, effect.args);
        const approved = typeof decision === 'boolean' ? decision : decision.approved;
        if (approved) return { type: 'approvalGiven', effectId: effect.id };
        const reason = typeof decision === 'boolean' ? undefined : decision.reason;
        return { type: 'approvalDenied', effectId: effect.id, ...(reason ? { reason } : {}) };
      } catch (error) {
        return {
          type: 'approvalDenied',
          effectId: effect.id,
          reason: `the approval check failed: ${messageOf(error)}`,
        };
      }
    },
    callTool: toolPerformer(deps),
    emit: (effect) => {
      deps.announce({ type: 'observation', observation: effect.observation });
      return undefined;
    },
    finish: () => undefined,
  };
}

/**
 * A person is asked about a call (to approve it, or the question it asks) only when the tool
 * takes its arguments: arguments its schema refuses are answered with the usual error at once,
 * whoever performs the asking (the default performer, a host's, a durable engine's). A call to a
 * tool without an implementation here is left to the performers (a host's may run it).
 */
export function askingAfterCheck<
  P extends {
    readonly requestApproval?: AgentPerformer<'requestApproval'>;
    readonly askHuman?: AgentPerformer<'askHuman'>;
  },
>(performers: P, tools: ReadonlyMap<string, Tool>): P {
  const refused = (effect: Extract<Effect, { type: 'requestApproval' | 'askHuman' }>): AnyEvent | undefined => {
    const tool = tools.get(effect.call.name);
    const parsed = tool ? parseArguments(tool, effect.call.name, effect.args) : undefined;
    return parsed && !parsed.isOk() ? { type: 'callRefused', effectId: effect.id, error: parsed.error } : undefined;
  };
  const { requestApproval: approve, askHuman: ask } = performers;
  const requestApproval: AgentPerformer<'requestApproval'> | undefined =
    approve && ((effect, context) => refused(effect) ?? approve(effect, context));
  const askHuman: AgentPerformer<'askHuman'> | undefined =
    ask && ((effect, context) => refused(effect) ?? ask(effect, context));
  return { ...performers, requestApproval, askHuman };
}

/** Every call of the turn may run alongside the others. */
function allParallelSafe(batch: readonly { readonly type: string }[]): boolean {
  return (batch as readonly AnyEffect[]).every((effect) => effect.type !== 'callTool' || effect.parallelSafe);
}

/**
 * Calls of one turn run concurrently (up to `maxParallelTools`) when every call of the turn is
 * parallel-safe, and strictly one after another otherwise. Nothing new starts after a cancel.
 */
function toolPerformer(deps: PerformerDeps): AgentPerformer<'callTool'> {
  const cap = Math.max(1, deps.maxParallelTools ?? 8);
  // Each tool's per-run data as its last call left it: the next call must see it even before
  // that call's result has been applied (the state gets it with the result, for a resume).
  const data = new Map<string, unknown>();
  let running = 0;
  const queued: (() => void)[] = [];
  let serial: Promise<unknown> = Promise.resolve();

  // A free slot is taken at once, without a wait in the microtask queue.
  const permit = (): Promise<void> | undefined => {
    if (running < cap) {
      running++;
      return undefined;
    }
    return new Promise<void>((resolve) => queued.push(resolve)).then(() => {
      running++;
    });
  };
  const release = () => {
    running--;
    queued.shift()?.();
  };

  return (effect, context) => {
    if (!allParallelSafe(context.batch)) {
      const turn = serial.then(() => run(effect, context, false));
      serial = turn.catch(() => undefined);
      return turn;
    }
    const waiting = permit();
    return waiting ? waiting.then(() => run(effect, context, true)) : run(effect, context, true);
  };

  // One async function per call, holding its permit (when it took one) until it is over.
  async function run(
    effect: Extract<Effect, { type: 'callTool' }>,
    context: PerformContext<AgentState, AnyEvent>,
    permitted: boolean,
  ) {
    try {
      if (context.signal.aborted) return undefined;
      const name = effect.call.name;
      const tool = deps.tools.get(name) ?? (await addedTool(deps, name, context.signal));
      // Saved before it runs: a crash from here on must not lead to a second run.
      if (tool?.spec.atMostOnce) {
        await context.dispatch({ type: 'toolStarted', effectId: effect.id });
        if (context.signal.aborted) return undefined;
      }
      const state = context.state();
      const event = await executeTool(effect, tool, deps.scope, {
        ...(deps.toolTimeoutMs !== undefined ? { toolTimeoutMs: deps.toolTimeoutMs } : {}),
        data: data.has(name) ? data.get(name) : state.toolData?.[name],
        // Only a call to a tool that has gone is told which ones there are.
        ...(tool ? {} : { available: (state.tools ?? deps.agent.config.tools).map((t) => t.name) }),
        saveProgress: (progress, usage) =>
          void context.dispatch({ type: 'toolProgressed', effectId: effect.id, progress, ...(usage ? { usage } : {}) }),
      });
      if (event.type === 'toolCompleted' && event.data !== undefined) data.set(name, event.data);
      return event;
    } finally {
      if (permitted) release();
    }
  }
}

/** A tool added during an earlier run of this state, as the agent finds it again (`Agent.findTool`). */
async function addedTool(deps: PerformerDeps, name: string, signal: AbortSignal): Promise<Tool | undefined> {
  if (!deps.agent.findTool) return undefined;
  try {
    return await deps.agent.findTool(name, { ...deps.scope, signal });
  } catch {
    // Not found is what the model is told (the call's answer names the tools there are).
    return undefined;
  }
}
