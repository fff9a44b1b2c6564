import type { Agent } from '../kernel/agent.js';
import { type AgentState, emptyUsage, isFinal, type Usage, usageSince } from '../kernel/state.js';
import type { LlmPort } from '../llm/llm.js';
import { err } from '../result.js';
import { defineTool, type Tool } from '../tools/defineTool.js';
import { lazySchema } from '../tools/lazySchema.js';
import { type RunOptions, resume, resumeWith, run } from './run.js';
import { createRunEmitter, type RunItem } from './runItems.js';
import { hostCallbacksOf } from './scope.js';

export interface AgentToolOptions {
  /** The tool's name (default: the agent's name in snake_case). */
  readonly name?: string;
  /** What the parent's model reads about it (default: the agent's description). */
  readonly description?: string;
  /** The child's model (default: the parent run's, so its calls count in the parent's usage). */
  readonly llm?: LlmPort;
  /** Longest the child may run, in ms (default 30 minutes). */
  readonly timeoutMs?: number;
}

/** `WebResearcher`, `web researcher`, `HTTPFetcher` → `web_researcher`, `web_researcher`, `http_fetcher`. */
const snakeCase = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/\W+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase() || 'agent';

/** The usage a saved child state records (none for anything else). */
function usageOf(progress: unknown): Usage {
  const usage = (progress as { usage?: Partial<Usage> } | null | undefined)?.usage;
  if (typeof usage !== 'object' || usage === null) return emptyUsage;
  const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);
  const count = (n: unknown) => (isCount(n) ? n : 0);
  const { cachedInputTokens, cacheWriteTokens, reasoningTokens, costUsd } = usage;
  return {
    inputTokens: count(usage.inputTokens),
    outputTokens: count(usage.outputTokens),
    llmCalls: count(usage.llmCalls),
    ...(isCount(cachedInputTokens) ? { cachedInputTokens } : {}),
    ...(isCount(cacheWriteTokens) ? { cacheWriteTokens } : {}),
    ...(isCount(reasoningTokens) ? { reasoningTokens } : {}),
    ...(isCount(costUsd) || costUsd === null ? { costUsd } : {}),
  };
}

/** `{ task }`, described for the child (zod is loaded on the first call, not when the tool is made). */
export const taskParameters = (description: string) =>
  lazySchema({ type: 'object', properties: { task: { type: 'string', description } }, required: ['task'] }, (z) =>
    z.object({ task: z.string().describe(description) }),
  );

const ITEM_TYPES: readonly RunItem['type'][] = ['effect', 'event', 'observation', 'result'];

/**
 * Another agent as one tool call: the parent's model gives it a task, the child runs to its
 * answer. Its items reach the parent's stream tagged with their origin, its usage counts in the
 * parent's, its state is kept in the parent's (a resume continues the child), and a child
 * waiting for a person pauses the parent until the answer comes back through it.
 */
export function agentTool(agent: Agent, options: AgentToolOptions = {}): Tool<{ task: string }> {
  const name = options.name ?? snakeCase(agent.config.name);
  return defineTool({
    name,
    description: options.description ?? (agent.config.description || `Hand a task to the ${agent.config.name} agent.`),
    parameters: taskParameters(`The task for ${agent.config.name}, with everything it needs.`),
    timeoutMs: options.timeoutMs ?? 30 * 60_000,
    execute: async ({ task }, scope) => {
      const llm = options.llm ?? scope.llm;
      const emitter = createRunEmitter();
      const from = { agent: agent.config.name, model: llm.model };
      const forward = (item: RunItem) => scope.emit(item, from);
      for (const type of ITEM_TYPES) emitter.on(type, forward);
      // The child streams its model's replies only when the parent's items are read that far.
      if (scope.takesDeltas?.()) emitter.on('delta', forward);
      // Another port's calls are counted here, as the child's state records them; the parent's own
      // port counts them itself. What the state held when this call resumed was counted before.
      let counted = usageOf(scope.progress);
      const count = (state: AgentState) => {
        if (!options.llm) return;
        scope.addUsage(usageSince(state.usage, counted));
        counted = state.usage;
      };
      const child: RunOptions = {
        llm,
        runId: `${scope.runId}/${scope.effectId}`,
        signal: scope.signal,
        emitter,
        // Usage first, so that a host recording progress with its usage sees both together.
        checkpoint: (state) => {
          count(state);
          scope.saveProgress(state);
        },
        ...(scope.workspace !== undefined ? { workspace: scope.workspace } : {}),
        ...hostCallbacksOf(scope),
      };
      const outcome =
        scope.progress === undefined
          ? await run(agent, task, child)
          : scope.answer
            ? await resumeWith(agent, scope.progress, scope.answer, child)
            : await resume(agent, scope.progress, child);
      count(outcome.state);
      if (!isFinal(outcome.state)) return { suspend: { progress: outcome.state, waiting: outcome.pending } };
      if (outcome.status === 'failed')
        return err(`${agent.config.name} failed: ${outcome.error?.message ?? 'no reason given'}`);
      const answer = outcome.answer || `${agent.config.name} finished (${outcome.finishReason ?? 'no answer'}).`;
      // A finished run carries an error only when it stopped short of its task (the step limit, the
      // token budget): the parent's model must not take what it had for a full answer.
      return outcome.error
        ? `${answer}\n(${agent.config.name} stopped before finishing: ${outcome.error.message})`
        : answer;
    },
  });
}
