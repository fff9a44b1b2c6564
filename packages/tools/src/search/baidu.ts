import { parseHtml, selectAll, textOf } from '../web/html.js';
import { endpoint, ensureOk } from './engineKit.js';
import type { EngineHit, SearchEngine } from './types.js';

export interface BaiduEngineOptions {
  /** Default `https://www.baidu.com`. */
  readonly baseUrl?: string;
}

/** Baidu, read from its result page (`rn` results, up to 50). Baidu has no language or region parameter. */
export function baiduEngine(options: BaiduEngineOptions = {}): SearchEngine {
  const base = options.baseUrl ?? 'https://www.baidu.com';
  return {
    name: 'baidu',
    async search(query, { numResults, fetch }) {
      const url = endpoint(base, '/s', { wd: query, rn: Math.min(numResults, 50), ie: 'utf-8' });
      const page = await fetch(url);
      if (new URL(page.url).hostname.startsWith('wappass.') || page.url.includes('/static/captcha')) {
        throw new Error('Baidu answered with its CAPTCHA page');
      }
      return parseBaiduPage(ensureOk(page, 'Baidu').text);
    },
  };
}

/**
 * The results on a Baidu result page. Their links go through baidu.com/link; the target is in the
 * result's `mu` attribute when Baidu gives it. Promoted results are left out.
 */
async function parseBaiduPage(html: string): Promise<EngineHit[]> {
  const document = await parseHtml(html);
  return selectAll(document, '#content_left > .c-container:not([data-tuiguang])').flatMap((result) => {
    const link = result.querySelector('h3 a');
    const target = result.getAttribute('mu');
    const url = target && /^https?:\/\//.test(target) ? target : link?.getAttribute('href');
    if (!url) return [];
    const abstract = result.querySelector('[class*="content-right"], .c-abstract, [data-module="abstract"]');
    return [{ title: textOf(result.querySelector('h3')), url, description: textOf(abstract) }];
  });
}
