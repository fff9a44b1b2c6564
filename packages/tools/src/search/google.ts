import { parseHtml, selectAll, textOf } from '../web/html.js';
import { collectPages, endpoint, ensureOk, primaryLanguage } from './engineKit.js';
import type { EngineHit, SearchEngine } from './types.js';

/**
 * Google's result page needs JavaScript in a browser; to an old phone it still sends its light
 * WML/XHTML layout (as SearXNG found, issue #6359), which is what this engine reads.
 */
const PHONE_USER_AGENT = 'Nokia6230i/2.0 (03.80) Profile/MIDP-2.0 Configuration/CLDC-1.1';

export interface GoogleEngineOptions {
  /** Default `https://www.google.com`. */
  readonly baseUrl?: string;
}

/** Google, read from its result page: 10 results a page; `hl`/`lr` for the language, `gl` for the country. */
export function googleEngine(options: GoogleEngineOptions = {}): SearchEngine {
  const base = options.baseUrl ?? 'https://www.google.com';
  return {
    name: 'google',
    search: (query, { numResults, lang, country, fetch }) =>
      collectPages(numResults, 10, async (offset) => {
        const language = primaryLanguage(lang);
        const url = endpoint(base, '/wml/search', {
          q: query,
          hl: language,
          lr: `lang_${language}`,
          gl: country.toLowerCase(),
          ie: 'utf8',
          oe: 'utf8',
          start: offset || undefined,
        });
        const page = await fetch(url, { headers: { 'user-agent': PHONE_USER_AGENT, accept: '*/*' } });
        const where = new URL(page.url);
        if (where.hostname === 'sorry.google.com' || where.pathname.startsWith('/sorry')) {
          throw new Error('Google answered with its CAPTCHA page (unusual traffic from this address)');
        }
        return parseGooglePage(ensureOk(page, 'Google').text);
      }),
  };
}

/** The results on a Google result page (light layout); its links go through `/url?q=`. */
async function parseGooglePage(html: string): Promise<EngineHit[]> {
  const document = await parseHtml(html);
  return selectAll(document, 'div.zMzFAb').flatMap((block) => {
    const link = block.querySelector('a.fuLhoc');
    const href = link?.getAttribute('href');
    if (!link || !href) return [];
    return [
      {
        title: textOf(link.querySelector('span.CVA68e')),
        url: unwrapGoogleLink(href),
        description: textOf(block.querySelector('div.taTFJ span.FrIlee')),
      },
    ];
  });
}

function unwrapGoogleLink(href: string): string {
  if (!href.startsWith('/url?')) return href;
  return new URLSearchParams(href.slice('/url?'.length)).get('q') ?? href;
}
