import { readablePageText } from '../web/html.js';
import { httpRequest } from '../web/http.js';
import { AddressRefusedError, type NetworkPolicy } from '../web/networkPolicy.js';
import { collapseWhitespace, cutText } from '../web/text.js';
import type { SearchResult } from './types.js';

export interface ContentLimits {
  readonly timeoutMs: number;
  /** Characters of text kept per page (the rest is cut, with a marker). */
  readonly maxChars: number;
  /** Bytes read per page. */
  readonly maxBytes: number;
  /** Where the pages may come from (they come from untrusted results). */
  readonly network: NetworkPolicy;
  readonly userAgent?: string;
  readonly fetch?: typeof globalThis.fetch;
}

/** What was found at a result's URL: its text, why it was not fetched, or nothing. */
export type PageContent = Pick<SearchResult, 'content' | 'contentRefused'>;

const isPage = (mediaType: string) => mediaType === '' || mediaType.includes('html') || mediaType === 'text/plain';

/**
 * The readable text of the page at `url` (boilerplate removed, whitespace collapsed, cut to
 * `maxChars`); why it was refused, when its address may not be reached; nothing when there is no
 * text: not 200, not HTML or text, unreachable, too slow.
 */
export async function fetchPageContent(url: string, limits: ContentLimits, signal: AbortSignal): Promise<PageContent> {
  const deadline = Date.now() + limits.timeoutMs;
  try {
    const page = await httpRequest(
      url,
      { headers: { accept: 'text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8' } },
      { ...limits, signal, readBody: isPage },
    );
    if (page.status !== 200 || !isPage(page.mediaType) || page.text.includes('\u0000')) return {};
    const text =
      page.mediaType === 'text/plain'
        ? collapseWhitespace(page.text)
        : await readablePageText(page.text, { timeoutMs: Math.max(1, deadline - Date.now()), signal });
    return text ? { content: cutText(text, limits.maxChars) } : {};
  } catch (error) {
    return error instanceof AddressRefusedError ? { contentRefused: error.message } : {};
  }
}

/** The results with the text of their pages, fetched all at once. */
export function withContent(
  results: readonly SearchResult[],
  limits: ContentLimits,
  signal: AbortSignal,
): Promise<SearchResult[]> {
  return Promise.all(
    results.map(async (result) => ({ ...result, ...(await fetchPageContent(result.url, limits, signal)) })),
  );
}
