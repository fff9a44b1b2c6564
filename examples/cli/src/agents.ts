import { type Agent, createManus, type SandboxMode, type SearchSettings } from '@openmanus/core';
import {
  createDataAnalysis,
  createSweAgent,
  createWebFetch,
  createWebSearch,
  searchOptionsFrom,
} from '@openmanus/tools';

/** What the command line and config.toml say about the agent, whichever agent it is. */
export interface AgentSettings {
  readonly workspace: string;
  readonly maxSteps: number;
  /** Isolation of the agent's Python or shell. */
  readonly sandbox: SandboxMode;
  /** `max_input_tokens` of the agent's `[llm.<name>]` profile. */
  readonly maxInputTokens?: number;
  /** `[search]` of config.toml. */
  readonly search: SearchSettings;
}

const tokenLimit = (settings: AgentSettings) =>
  settings.maxInputTokens !== undefined ? { maxInputTokens: settings.maxInputTokens } : {};

/**
 * The agents `--agent` names: OpenManus's presets. Each uses the `[llm.<name>]` profile of its
 * name, as the preset defines. Manus also searches and reads the web (OpenManus's Manus could not).
 */
const AGENTS = {
  manus: (settings: AgentSettings) =>
    createManus({
      workspace: settings.workspace,
      maxSteps: settings.maxSteps,
      python: { sandbox: settings.sandbox },
      ...tokenLimit(settings),
      extraTools: [createWebSearch(searchOptionsFrom(settings.search)), createWebFetch()],
    }),
  swe: (settings: AgentSettings) =>
    createSweAgent({
      workspace: settings.workspace,
      maxSteps: settings.maxSteps,
      bash: { sandbox: settings.sandbox },
      ...tokenLimit(settings),
    }),
  data_analysis: (settings: AgentSettings) =>
    createDataAnalysis({
      workspace: settings.workspace,
      maxSteps: settings.maxSteps,
      python: { sandbox: settings.sandbox },
      ...tokenLimit(settings),
    }),
} satisfies Record<string, (settings: AgentSettings) => Agent>;

export type AgentName = keyof typeof AGENTS;
export const AGENT_NAMES = Object.keys(AGENTS) as readonly AgentName[];

export const isAgentName = (name: string): name is AgentName => Object.hasOwn(AGENTS, name);

export const createCliAgent = (name: AgentName, settings: AgentSettings): Agent => AGENTS[name](settings);
