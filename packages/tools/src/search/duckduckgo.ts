import { parseHtml, selectAll, textOf } from '../web/html.js';
import { endpoint, ensureOk, primaryLanguage } from './engineKit.js';
import type { EngineHit, SearchEngine } from './types.js';

export interface DuckDuckGoEngineOptions {
  /** Default `https://html.duckduckgo.com` (the page that works without JavaScript). */
  readonly baseUrl?: string;
}

/**
 * DuckDuckGo's HTML page: the query is posted as its own form does; the region (`kl`, e.g.
 * us-en) carries country and language. One page (more needs a token from the first).
 */
export function duckDuckGoEngine(options: DuckDuckGoEngineOptions = {}): SearchEngine {
  const base = options.baseUrl ?? 'https://html.duckduckgo.com';
  return {
    name: 'duckduckgo',
    async search(query, { lang, country, fetch }) {
      const url = endpoint(base, '/html/', {});
      const region = `${country.toLowerCase()}-${primaryLanguage(lang)}`;
      const page = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', referer: url },
        body: new URLSearchParams({ q: query, b: '', kl: region }).toString(),
      });
      return parseDuckDuckGoPage(ensureOk(page, 'DuckDuckGo').text);
    },
  };
}

/** The results on DuckDuckGo's HTML page, without its ads; throws on its bot check. */
async function parseDuckDuckGoPage(html: string): Promise<EngineHit[]> {
  const document = await parseHtml(html);
  if (document.querySelector('form#challenge-form, .anomaly-modal__modal')) {
    throw new Error('DuckDuckGo answered with its bot check instead of results');
  }
  return selectAll(document, '#links .web-result:not(.result--ad)').flatMap((result) => {
    const link = result.querySelector('a.result__a');
    const href = link?.getAttribute('href');
    if (!link || !href) return [];
    return [
      {
        title: textOf(link),
        url: unwrapDuckDuckGoLink(href),
        description: textOf(result.querySelector('.result__snippet')),
      },
    ];
  });
}

/** Links through `//duckduckgo.com/l/?uddg=<target>` lead to the target. */
function unwrapDuckDuckGoLink(href: string): string {
  const url = new URL(href, 'https://duckduckgo.com');
  return (url.pathname === '/l/' && url.searchParams.get('uddg')) || url.href;
}
