import { fragmentText } from '../web/html.js';
import { endpoint, ensureOk, jsonOf, primaryLanguage } from './engineKit.js';
import type { SearchEngine } from './types.js';

export interface SearxngEngineOptions {
  /** Your SearXNG instance, e.g. `https://searx.example.org` (`[search] searxng_url`). */
  readonly baseUrl: string;
}

interface SearxngAnswer {
  readonly results?: readonly { readonly url?: unknown; readonly title?: unknown; readonly content?: unknown }[];
}

/** A SearXNG instance's JSON API (its `search.formats` must include `json`): `language` is e.g. en-US. */
export function searxngEngine(options: SearxngEngineOptions): SearchEngine {
  return {
    name: 'searxng',
    async search(query, { lang, country, fetch }) {
      const url = endpoint(options.baseUrl, '/search', {
        q: query,
        format: 'json',
        language: `${primaryLanguage(lang)}-${country.toUpperCase()}`,
        pageno: 1,
      });
      const page = await fetch(url, { headers: { accept: 'application/json' } });
      if (page.status === 403) {
        throw new Error(
          'SearXNG answered HTTP 403: the instance must allow the json format (search.formats in settings.yml)',
        );
      }
      const answer = jsonOf(ensureOk(page, 'SearXNG'), 'SearXNG') as SearxngAnswer;
      return Promise.all(
        (answer.results ?? []).map(async (result) => ({
          ...(typeof result.url === 'string' ? { url: result.url } : {}),
          ...(typeof result.title === 'string' ? { title: result.title } : {}),
          ...(typeof result.content === 'string' ? { description: await fragmentText(result.content) } : {}),
        })),
      );
    },
  };
}
