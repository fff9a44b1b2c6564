import { parseHtml, selectAll, textOf } from '../web/html.js';
import { collectPages, endpoint, ensureOk, primaryLanguage } from './engineKit.js';
import type { EngineHit, SearchEngine } from './types.js';

export interface BingEngineOptions {
  /** Default `https://www.bing.com`. */
  readonly baseUrl?: string;
}

/** Bing, read from its result page: pages of 10; the market (`mkt`, e.g. en-US) sets language and country. */
export function bingEngine(options: BingEngineOptions = {}): SearchEngine {
  const base = options.baseUrl ?? 'https://www.bing.com';
  return {
    name: 'bing',
    search: (query, { numResults, lang, country, fetch }) =>
      collectPages(numResults, 10, async (offset) => {
        const market = `${primaryLanguage(lang)}-${country.toUpperCase()}`;
        const url = endpoint(base, '/search', {
          q: query,
          mkt: market,
          setlang: lang,
          first: offset ? offset + 1 : undefined,
        });
        const page = await fetch(url, { headers: { 'accept-language': `${market},${primaryLanguage(lang)};q=0.9` } });
        return parseBingPage(ensureOk(page, 'Bing').text);
      }),
  };
}

/** The organic results on a Bing result page (ads and answer cards are other list items). */
async function parseBingPage(html: string): Promise<EngineHit[]> {
  const document = await parseHtml(html);
  return selectAll(document, '#b_results > li.b_algo').flatMap((item) => {
    const link = item.querySelector('h2 a');
    const href = link?.getAttribute('href');
    if (!link || !href) return [];
    // The "WEB" label Bing puts before some snippets is not part of them.
    for (const label of selectAll(item, '.algoSlug_icon')) label.remove();
    const snippet = item.querySelector('.b_caption p') ?? item.querySelector('p');
    return [{ title: textOf(link), url: unwrapBingLink(href), description: textOf(snippet) }];
  });
}

/** Bing's tracking links (`/ck/a?…&u=a1<base64url of the target>`) lead to the target. */
function unwrapBingLink(href: string): string {
  let url: URL;
  try {
    url = new URL(href, 'https://www.bing.com');
  } catch {
    return href;
  }
  const target = url.pathname === '/ck/a' ? url.searchParams.get('u') : null;
  if (!target?.startsWith('a1')) return href;
  return Buffer.from(target.slice(2), 'base64url').toString('utf8');
}
