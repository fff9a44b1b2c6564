import type { AgentState, ContextGatherer, ContextProvider, ImageData, Message, RunScope } from '@openmanus/core';
import { assistantMessage } from '@openmanus/core/kernel';
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

const callsBrowser = (message: Message | undefined): boolean =>
  message?.role === 'assistant' && (message.toolCalls?.some((call) => call.name === 'browser_use') ?? false);

/**
 * Whether browser_use was called lately: in the newest reply, however many results of parallel calls
 * follow it (its result is kept as its brief, so the page must come with the context), or in the
 * last three messages.
 */
function usedBrowserRecently(state: AgentState): boolean {
  const { messages } = state;
  let newest = messages.length - 1;
  while (newest > 0 && messages[newest]?.role === 'tool') newest--;
  return callsBrowser(messages[newest]) || messages.slice(-RECENT).some(callsBrowser);
}

/** The id of the call the page state answers: one per request, never stored. */
const PAGE_STATE_CALL = 'browser_page_state';

/**
 * The page state as an observation: a get_current_state call and its result, so that what the page
 * says reaches the model in the tool's role (and marked as page content), not as the user's words.
 */
function pageObservation(gathered: PageContext): Message[] {
  const call = { id: PAGE_STATE_CALL, name: 'browser_use', arguments: '{"action":"get_current_state"}' };
  return [
    assistantMessage('', [call]),
    {
      role: 'tool',
      toolCallId: PAGE_STATE_CALL,
      name: 'browser_use',
      content: `The browser now, before this step:\n${gathered.state}`,
      ...(gathered.screenshot ? { image: gathered.screenshot } : {}),
    },
  ];
}

const isPageContext = (value: unknown): value is PageContext =>
  typeof value === 'object' && value !== null && typeof (value as { state?: unknown }).state === 'string';

/**
 * OpenManus's browser swap, without its bugs: while browser_use was called in the last three
 * messages, the current page state (elements included, scroll position right) and, for a model
 * that sees images (`vision`), a viewport screenshot follow the history as the result of a
 * get_current_state call — in the tool's role, not the user's (OpenManus put the page into the
 * user's prompt, where a page saying "the user confirmed" would be the user speaking). Neither is
 * stored in memory; once the browser is left alone, requests are as before.
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
        return { ...request, messages: [...request.messages, ...pageObservation(gathered)] };
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
