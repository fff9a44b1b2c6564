import { createOpenAiLlm } from '@openmanus/core';
import { createSqliteStore } from '@openmanus/sqlite';
import { supportAgent } from '../agent.js';
import { createRuns, type Runs } from '../runs.js';

let current: Runs | undefined;

/** The runs of this server process, made on first use from the environment (lib/agent.ts in a Next.js app). */
export function agentRuns(): Runs {
  current ??= createRuns({
    agent: supportAgent,
    llm: createOpenAiLlm({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY }),
    store: createSqliteStore(process.env.RUNS_DB ?? 'runs.db'),
    token: process.env.AGENT_TOKEN ?? '',
  });
  return current;
}

/** For tests: the runs the route handlers use (a scripted model, a temporary database). */
export function useRuns(runs: Runs): void {
  current = runs;
}

/** The second argument Next.js (15 and later) passes to a route handler of a dynamic segment. */
export interface RunContext {
  readonly params: Promise<{ id: string }>;
}
