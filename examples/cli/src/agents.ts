import { browserOptionsFrom, createBrowserAgent, withBrowser } from '@openmanus/browser';
import {
  type Agent,
  type BrowserSettings,
  createManus,
  llmSettingsFor,
  type OpenManusConfig,
  type SandboxMode,
  type SearchSettings,
} from '@openmanus/core';
import {
  createDataAnalysis,
  createSandboxManus,
  createSweAgent,
  createWebFetch,
  createWebSearch,
  searchOptionsFrom,
} from '@openmanus/tools';
import type { NamedProvider } from './sandboxProvider.js';

/** What the command line and config.toml say about the agent, whichever agent it is. */
export interface AgentSettings {
  readonly workspace: string;
  readonly maxSteps: number;
  /** Isolation of the agent's Python or shell. */
  readonly sandbox: SandboxMode;
  /**
   * Where the agent works instead (manus, swe, data_analysis): its shell, files and Python in one
   * sandbox of this provider per run, the model told the workspace as the sandbox sees it.
   */
  readonly sandboxed?: NamedProvider;
  /** `max_input_tokens` of the agent's `[llm.<name>]` profile. */
  readonly maxInputTokens?: number;
  /** `[search]` of config.toml. */
  readonly search: SearchSettings;
  /** `[browser]` of config.toml. */
  readonly browser: BrowserSettings;
}

const tokenLimit = (settings: AgentSettings) =>
  settings.maxInputTokens !== undefined ? { maxInputTokens: settings.maxInputTokens } : {};

/** browser_use as config.toml sets it up: `[browser]`, its web_search action searching as `[search]` says. */
const browserOptions = (settings: AgentSettings) => ({
  ...browserOptionsFrom(settings.browser),
  workspace: settings.workspace,
  search: searchOptionsFrom(settings.search),
});

/**
 * The agents `--agent` names: OpenManus's presets. Each uses the `[llm.<name>]` profile of its
 * name, as the preset defines. Manus also searches and reads the web (OpenManus's Manus could not),
 * and has the browser, as OpenManus's Manus does.
 */
const AGENTS = {
  manus: (settings: AgentSettings) => {
    const manus = {
      maxSteps: settings.maxSteps,
      ...tokenLimit(settings),
      extraTools: [createWebSearch(searchOptionsFrom(settings.search)), createWebFetch()],
    };
    const agent = settings.sandboxed
      ? createSandboxManus({ ...manus, sandbox: settings.sandboxed.provider, workspace: settings.sandboxed.workspace })
      : createManus({ ...manus, workspace: settings.workspace, python: { sandbox: settings.sandbox } });
    return withBrowser(agent, browserOptions(settings));
  },
  swe: (settings: AgentSettings) =>
    createSweAgent({
      workspace: settings.sandboxed?.workspace ?? settings.workspace,
      maxSteps: settings.maxSteps,
      bash: { sandbox: settings.sandbox },
      ...(settings.sandboxed ? { sandboxProvider: settings.sandboxed.provider } : {}),
      ...tokenLimit(settings),
    }),
  data_analysis: (settings: AgentSettings) =>
    createDataAnalysis({
      workspace: settings.sandboxed?.workspace ?? settings.workspace,
      maxSteps: settings.maxSteps,
      python: { sandbox: settings.sandbox },
      ...(settings.sandboxed ? { sandboxProvider: settings.sandboxed.provider } : {}),
      ...tokenLimit(settings),
    }),
  browser: (settings: AgentSettings) =>
    createBrowserAgent({ ...browserOptions(settings), maxSteps: settings.maxSteps, ...tokenLimit(settings) }),
} satisfies Record<string, (settings: AgentSettings) => Agent>;

export type AgentName = keyof typeof AGENTS;
export const AGENT_NAMES = Object.keys(AGENTS) as readonly AgentName[];

export const isAgentName = (name: string): name is AgentName => Object.hasOwn(AGENTS, name);

export const createCliAgent = (name: AgentName, settings: AgentSettings): Agent => AGENTS[name](settings);

/** The agent as `openmanus --agent <name>` runs it: with its `[llm.<name>]` profile's input limit, if any. */
export function profiledAgent(name: AgentName, settings: AgentSettings, config: OpenManusConfig | undefined): Agent {
  const maxInputTokens = config && llmSettingsFor(config, name).max_input_tokens;
  return createCliAgent(name, { ...settings, ...(maxInputTokens ? { maxInputTokens } : {}) });
}
