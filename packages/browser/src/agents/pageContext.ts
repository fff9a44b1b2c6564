import {
  type AgentState,
  type ContextGatherer,
  type ContextProvider,
  type ImageData,
  type RunScope,
  userMessage,
} from '@openmanus/core';
import type { BrowserUseTool } from '../browserUse.js';

/** The context provider's name (and its gatherer's key). */
export const PAGE_CONTEXT = 'browser_page';

/** What is gathered before a step: the page state, and a screenshot for a model that sees images. */
export interface PageContext {
  readonly state: string;
  readonly screenshot?: ImageData;
}

/** How many of the newest messages are looked at for a browser_use call (OpenManus: the last 3). */
const RECENT = 3;

const usedBrowserRecently = (state: AgentState): boolean =>
  state.messages
    .slice(-RECENT)
    .some((message) => message.role === 'assistant' && message.toolCalls?.some((call) => call.name === 'browser_use'));

const isPageContext = (value: unknown): value is PageContext =>
  typeof value === 'object' && value !== null && typeof (value as { state?: unknown }).state === 'string';

/**
 * OpenManus's browser swap, without its bugs: while browser_use was called in the last three
 * messages, the next step's prompt starts with the current page state (elements included, scroll
 * position right) and, for a model that sees images (`vision`), a viewport screenshot follows the
 * history as a user message. Neither is stored in memory; once the browser is left alone, the
 * normal prompt returns.
 */
export function pageContext(
  tool: BrowserUseTool,
  options: { readonly vision?: boolean } = {},
): { readonly provider: ContextProvider; readonly gatherer: ContextGatherer } {
  return {
    provider: {
      name: PAGE_CONTEXT,
      when: usedBrowserRecently,
      apply: (gathered, request) => {
        if (!isPageContext(gathered)) return request;
        return {
          nextStepPrompt: `The browser now:\n${gathered.state}\n\n${request.nextStepPrompt}`.trimEnd(),
          messages: gathered.screenshot
            ? [...request.messages, userMessage('Current browser screenshot:', gathered.screenshot)]
            : request.messages,
        };
      },
    },
    // A failure to look is no context (the step goes on without it), not a failed run.
    gatherer: async (scope: RunScope): Promise<PageContext | undefined> => {
      try {
        const session = await tool.session(scope);
        const state = await session.state();
        return options.vision ? { state, screenshot: await session.screenshot() } : { state };
      } catch {
        return undefined;
      }
    },
  };
}
