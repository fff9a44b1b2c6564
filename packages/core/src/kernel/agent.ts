import type { RunScope } from '../shell/scope.js';
import type { Tool } from '../tools/defineTool.js';
import type { SummarizePolicy } from './compaction.js';
import type { ContextProvider } from './context.js';
import type { Policy } from './policies.js';
import { createStep, type StepFunction } from './reducer.js';
import type { ToolSpec } from './tool.js';

export type ToolChoice = 'auto' | 'required' | 'none';
export type TokenizerName = 'cl100k_base' | 'o200k_base' | 'estimate';

/**
 * How much history each model request carries. The full transcript stays in the state. Between two
 * cuts the history sent only grows at its end, so a provider's prompt cache serves all of it but the
 * newest turn; past a limit it is cut in one jump down to `shrinkTo` of it.
 */
export interface MemoryPolicy {
  /** Most messages sent per request; cut on turn boundaries, the task always kept. */
  readonly maxMessages: number;
  /** Most tokens of history sent per request (the task and the newest turn always go), cut on turn boundaries. */
  readonly maxTokens?: number;
  /**
   * The share of `maxMessages` and `maxTokens` the history is cut to once it passes one (default
   * 0.5): lower cuts less often (the cache breaks once per cut), higher keeps requests nearer the limit.
   */
  readonly shrinkTo?: number;
  /** Summarise older turns through the model once the history passes a token threshold. */
  readonly summarize?: SummarizePolicy;
}

/** The agent *is* this object: plain data the reducer reads. */
export interface AgentConfig {
  readonly name: string;
  readonly description: string;
  readonly systemPrompt: string;
  /** Sent after the history on every turn, never stored in it. */
  readonly nextStepPrompt: string;
  readonly tools: readonly ToolSpec[];
  readonly toolChoice: ToolChoice;
  /** Longest observation kept, in characters; longer ones are cut with a visible marker. */
  readonly maxObserve?: number;
  /** Longest arguments string of one tool call; a longer call is answered with an error, and its arguments are not kept. */
  readonly maxToolArgsChars: number;
  /** A text-only reply in `auto` mode ends the run with that answer (false: OpenManus's loop-on). */
  readonly finishOnText: boolean;
  readonly memory: MemoryPolicy;
  /** What the agent counts tokens with: the history's token limits, its summary threshold, a `tokenBudget`. */
  readonly tokenizer: TokenizerName;
  /**
   * How many of the newest images the history keeps (tool screenshots, user images). Older ones are
   * taken out once there are twice as many (all at once, so the cache breaks once); 0 keeps none.
   */
  readonly keepImages: number;
  /**
   * How many of a tool's newest observations that have a `brief` the history keeps in full. Older
   * ones shrink to their brief (a page state is stale once a newer one is in memory) once a tool has
   * twice as many, all at once; with 0 every such observation is sent as its brief (for a tool whose
   * fresh state each step's context shows anyway, as the browser's page context does).
   */
  readonly keepFullObservations: number;
  /** Name of the LLM profile (config.toml `[llm.<name>]`) the interpreter should use. */
  readonly llmProfile?: string;
  /** Fresh context gathered before a step's request (e.g. the browser page). */
  readonly contextProviders?: readonly ContextProvider[];
}

export type AgentConfigInput = Pick<AgentConfig, 'name'> & Partial<Omit<AgentConfig, 'name'>>;

export const defaultAgentConfig: Omit<AgentConfig, 'name'> = {
  description: '',
  systemPrompt: '',
  nextStepPrompt: '',
  tools: [],
  toolChoice: 'auto',
  maxToolArgsChars: 200_000,
  finishOnText: true,
  memory: { maxMessages: 100 },
  tokenizer: 'cl100k_base',
  keepImages: 1,
  keepFullObservations: 2,
};

/** Settings that are policies' own now: a config that still has one fails, rather than the setting being ignored. */
const movedToPolicies: Readonly<Record<string, string>> = {
  maxSteps: 'stepLimit(maxSteps)',
  maxInputTokens: 'tokenBudget({ maxInputTokens })',
  duplicateThreshold: 'stuckDetection({ duplicates })',
  repeatedCallThreshold: 'stuckDetection({ repeats })',
};

/** Fills in the defaults: `defineAgent({ name: 'x', tools })` is a complete agent. */
export function defineAgent(input: AgentConfigInput): AgentConfig {
  for (const [setting, policy] of Object.entries(movedToPolicies)) {
    if (setting in input) {
      throw new TypeError(
        `${setting} is not an agent setting: it belongs to its policy, ${policy}, in the agent's policies (see defaultPolicies)`,
      );
    }
  }
  const config = { ...defaultAgentConfig, ...input };
  const shrinkTo = config.memory.shrinkTo;
  if (shrinkTo !== undefined && !(shrinkTo > 0 && shrinkTo <= 1)) {
    throw new RangeError(`memory.shrinkTo must be a share above 0 and at most 1, got ${shrinkTo}`);
  }
  if (!Number.isInteger(config.maxToolArgsChars) || config.maxToolArgsChars < 1) {
    throw new RangeError(`maxToolArgsChars must be a positive integer, got ${config.maxToolArgsChars}`);
  }
  const names = new Set<string>();
  for (const tool of config.tools) {
    if (names.has(tool.name)) throw new Error(`agent "${config.name}" has two tools named "${tool.name}"`);
    names.add(tool.name);
  }
  return config;
}

/** Gathers a context provider's data (I/O: a browser's page state, a file's contents) within a run's scope. */
export type ContextGatherer = (scope: RunScope) => Promise<unknown>;

/** A runnable agent: its config (data) and the implementations it names. */
export interface Agent {
  readonly config: AgentConfig;
  readonly tools: readonly Tool[];
  /** By provider name: how to gather what `config.contextProviders` ask for. */
  readonly contextGatherers?: Readonly<Record<string, ContextGatherer>>;
  /**
   * A tool the agent adds during a run (an MCP client's, through `scope.changeTools`), by name: for a
   * call a resumed run makes before anything added it again (a call approved, or answered, after a
   * restart). Without it, or when it finds none, the call is answered that the tool is not available.
   */
  readonly findTool?: (name: string, scope: RunScope) => Promise<Tool | undefined>;
  /** The step the shell runs: by default the loop with `defaultPolicies()`. */
  readonly step?: StepFunction;
  /** The policies `step` was made from, when it was (so that a rule can be added: `withApprovals`). */
  readonly policies?: readonly Policy[];
}

export type AgentInput = Omit<AgentConfigInput, 'tools'> & {
  readonly tools?: readonly Tool[];
  readonly contextGatherers?: Readonly<Record<string, ContextGatherer>>;
  /** The rules around the loop and their settings, replacing `defaultPolicies()` (add, drop or replace one). */
  readonly policies?: readonly Policy[];
  /** A whole step of the host's own (e.g. one that wraps `step`); wins over `policies`. */
  readonly step?: StepFunction;
};

/** `createAgent({ name, tools })`: the config is derived from the tools' specs. */
export function createAgent(input: AgentInput): Agent {
  const { tools = [], contextGatherers, policies, step, ...config } = input;
  const chosen = step ?? (policies ? createStep(policies) : undefined);
  return {
    config: defineAgent({ ...config, tools: tools.map((t) => t.spec) }),
    tools,
    ...(contextGatherers ? { contextGatherers } : {}),
    ...(chosen ? { step: chosen } : {}),
    ...(policies && !step ? { policies } : {}),
  };
}
