import { z } from 'zod';
import type { Agent } from '../kernel/agent.js';
import { isFinal } from '../kernel/state.js';
import type { LlmPort } from '../llm/llm.js';
import { err } from '../result.js';
import { defineTool, type Tool } from '../tools/defineTool.js';
import { type RunOptions, resume, resumeWith, run } from './run.js';
import { createRunEmitter, type RunItem } from './runItems.js';

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

const ITEM_TYPES: readonly RunItem['type'][] = ['effect', 'event', 'observation', 'result'];

/**
 * Another agent as one tool call: the parent's model gives it a task, the child runs to its
 * answer. Its items reach the parent's stream tagged with their origin, its usage counts in the
 * parent's, its state is kept in the parent's (a resume continues the child), and a child
 * waiting for a person pauses the parent until the answer comes back through it.
 */
export function agentTool(agent: Agent, options: AgentToolOptions = {}): Tool<{ task: string }> {
  const name = options.name ?? agent.config.name.replace(/\W+/g, '_').toLowerCase();
  return defineTool({
    name,
    description: options.description ?? (agent.config.description || `Hand a task to the ${agent.config.name} agent.`),
    parameters: z.object({ task: z.string().describe(`The task for ${agent.config.name}, with everything it needs.`) }),
    timeoutMs: options.timeoutMs ?? 30 * 60_000,
    execute: async ({ task }, scope) => {
      const emitter = createRunEmitter();
      for (const type of ITEM_TYPES) emitter.on(type, (item: RunItem) => scope.emit(item));
      const before = (scope.progress as { usage?: { inputTokens: number; outputTokens: number; llmCalls: number } })
        ?.usage;
      const child: RunOptions = {
        llm: options.llm ?? scope.llm,
        runId: `${scope.runId}/${scope.effectId}`,
        signal: scope.signal,
        emitter,
        checkpoint: (state) => scope.saveProgress(state),
        ...(scope.workspace !== undefined ? { workspace: scope.workspace } : {}),
        ...(scope.onHuman ? { onHuman: scope.onHuman } : {}),
        ...(scope.onApproval ? { onApproval: scope.onApproval } : {}),
      };
      const outcome =
        scope.progress === undefined
          ? await run(agent, task, child)
          : scope.answer
            ? await resumeWith(agent, scope.progress, scope.answer, child)
            : await resume(agent, scope.progress, child);
      // The parent's own port already counts the child's calls; another port's are added here.
      if (options.llm) {
        const { inputTokens, outputTokens, llmCalls } = outcome.usage;
        scope.addUsage({
          inputTokens: inputTokens - (before?.inputTokens ?? 0),
          outputTokens: outputTokens - (before?.outputTokens ?? 0),
          llmCalls: llmCalls - (before?.llmCalls ?? 0),
        });
      }
      if (!isFinal(outcome.state)) return { suspend: { progress: outcome.state, waiting: outcome.pending } };
      if (outcome.status === 'failed') return err(`${agent.config.name} failed: ${outcome.error ?? 'no reason given'}`);
      return outcome.answer || `${agent.config.name} finished (${outcome.finishReason ?? 'no answer'}).`;
    },
  });
}
