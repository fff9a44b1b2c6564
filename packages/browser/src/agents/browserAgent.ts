import { type Agent, createAgent, defaultPolicies, defineAgent, terminate } from '@openmanus/core';
import { createBrowserUse } from '../browserUse.js';
import { PAGE_CONTENT_NOTE } from '../pageContent.js';
import type { BrowserUseOptions } from '../settings.js';
import { PAGE_CONTEXT, pageContext } from './pageContext.js';

/** The browser agent's system prompt (OpenManus's asked for JSON replies and a "done" action that no tool has). */
export const browserSystemPrompt = `You are a browser agent: you do the task by operating a web browser with the browser_use tool.
- Every browser_use result ends with the page state: the URL, the tabs, the scroll position, what happened (new tabs, downloads, dialogs), and the links, buttons and fields near the viewport, each with a ref such as [ref=e12]. Act on an element by its ref; after an action that does not load a page, only what changed is listed.
- To find something on a long page use find (free) before scrolling through it; to read a page's content for facts use extract_content.
- If a ref is no longer on the page, use the fresh state you are given. If something covers the page (a cookie banner, a dialog), deal with it first.
- When the task is done, answer with what you found (or call terminate if there is nothing to say); if it cannot be done, say why.
- ${PAGE_CONTENT_NOTE}`;

export const browserNextStepPrompt =
  'What is the next step? Look at the page state, then act with browser_use — or answer if the task is done.';

export interface BrowserAgentOptions extends BrowserUseOptions {
  /** Most steps a task may take: the agent's `stepLimit` (default 20, OpenManus's). */
  readonly maxSteps?: number;
  /** Longest observation kept, in characters (default 10000, OpenManus's). */
  readonly maxObserve?: number;
  /** config.toml `[llm.<name>]` profile (default `browser`). */
  readonly llmProfile?: string;
  /** Input tokens one request may carry: a `tokenBudget` (the profile's `max_input_tokens`); unlimited by default. */
  readonly maxInputTokens?: number;
}

/**
 * Page states kept in full in memory: none. The page context sends the current page state after the
 * history at every step the browser is in use, so a browser_use result is kept as what its action did
 * and the page it left (its brief): the history then only grows at its end (a prompt cache serves it
 * all) and carries no page state twice.
 */
const KEEP_FULL_PAGE_STATES = 0;

/**
 * The tool for an agent, and the page context that feeds its state into the next step. With
 * `vision`, the screenshot goes with the context (once per step), not with every result.
 */
function browserParts(options: BrowserUseOptions) {
  const { vision, ...toolOptions } = options;
  const tool = createBrowserUse(toolOptions);
  return { tool, ...pageContext(tool, vision !== undefined ? { vision } : {}) };
}

/**
 * OpenManus's BrowserAgent ("browser": browser_use and terminate, 20 steps, observations cut at
 * 10000): the page state comes into each step's prompt while the browser is in use, and older
 * page states shrink in memory to what their action did.
 */
export function createBrowserAgent(options: BrowserAgentOptions = {}): Agent {
  const { maxSteps, maxObserve, llmProfile, maxInputTokens, ...browserOptions } = options;
  const { tool, provider, gatherer } = browserParts(browserOptions);
  return createAgent({
    name: 'browser',
    description: 'A browser agent that can control a browser to accomplish tasks.',
    systemPrompt: browserSystemPrompt,
    nextStepPrompt: browserNextStepPrompt,
    tools: [tool, terminate],
    maxObserve: maxObserve ?? 10_000,
    llmProfile: llmProfile ?? 'browser',
    policies: defaultPolicies({ maxSteps: maxSteps ?? 20, maxInputTokens }),
    contextProviders: [provider],
    contextGatherers: { [PAGE_CONTEXT]: gatherer },
    keepFullObservations: KEEP_FULL_PAGE_STATES,
  });
}

/**
 * The agent with browser_use added (Manus: `withBrowser(createManus(...))`): the tool, the page
 * context while the browser is in use, and page states sent only through it (none kept in memory). The
 * agent's own step, if it has one, is kept, with the policies it was made from.
 */
export function withBrowser(agent: Agent, options: BrowserUseOptions = {}): Agent {
  const { tool, provider, gatherer } = browserParts(options);
  return {
    config: defineAgent({
      ...agent.config,
      tools: [...agent.config.tools, tool.spec],
      contextProviders: [...(agent.config.contextProviders ?? []), provider],
      keepFullObservations: KEEP_FULL_PAGE_STATES,
    }),
    tools: [...agent.tools, tool],
    contextGatherers: { ...agent.contextGatherers, [PAGE_CONTEXT]: gatherer },
    ...(agent.step ? { step: agent.step } : {}),
    ...(agent.policies ? { policies: agent.policies } : {}),
  };
}
