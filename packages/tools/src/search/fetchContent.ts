import { pageText, parseHtml } from '../web/html.js';
import { httpRequest } from '../web/http.js';
import { collapseWhitespace, cutText } from '../web/text.js';
import type { SearchResult } from './types.js';

export interface ContentLimits {
  readonly timeoutMs: number;
  /** Characters of text kept per page (the rest is cut, with a marker). */
  readonly maxChars: number;
  /** Bytes read per page. */
  readonly maxBytes: number;
  readonly userAgent?: string;
  readonly fetch?: typeof globalThis.fetch;
}

const isPage = (mediaType: string) => mediaType === '' || mediaType.includes('html') || mediaType === 'text/plain';

/**
 * The readable text of the page at `url` (boilerplate removed, whitespace collapsed, cut to
 * `maxChars`), or undefined when there is none: not 200, not HTML or text, unreachable, too slow.
 */
export async function fetchPageContent(
  url: string,
  limits: ContentLimits,
  signal: AbortSignal,
): Promise<string | undefined> {
  try {
    const page = await httpRequest(
      url,
      { headers: { accept: 'text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8' } },
      { ...limits, signal, readBody: isPage },
    );
    if (page.status !== 200 || !isPage(page.mediaType) || page.text.includes('\u0000')) return undefined;
    const text = page.mediaType === 'text/plain' ? collapseWhitespace(page.text) : pageText(await parseHtml(page.text));
    return text ? cutText(text, limits.maxChars) : undefined;
  } catch {
    return undefined;
  }
}

/** The results with the text of their pages, fetched all at once. */
export function withContent(
  results: readonly SearchResult[],
  limits: ContentLimits,
  signal: AbortSignal,
): Promise<SearchResult[]> {
  return Promise.all(
    results.map(async (result) => {
      const content = await fetchPageContent(result.url, limits, signal);
      return content ? { ...result, content } : result;
    }),
  );
}
