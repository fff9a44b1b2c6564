import { fragmentText } from '../web/html.js';
import { endpoint, jsonOf, primaryLanguage } from './engineKit.js';
import type { SearchEngine } from './types.js';

export interface BraveEngineOptions {
  /** A Brave Search API key (`[search] brave_api_key`). */
  readonly apiKey: string;
  /** Default `https://api.search.brave.com`. */
  readonly baseUrl?: string;
}

interface BraveAnswer {
  readonly web?: {
    readonly results?: readonly { readonly url?: unknown; readonly title?: unknown; readonly description?: unknown }[];
  };
  readonly error?: { readonly detail?: unknown };
}

/** The Brave Search API (web results, at most 20 a request): `country` and `search_lang` parameters. */
export function braveEngine(options: BraveEngineOptions): SearchEngine {
  const base = options.baseUrl ?? 'https://api.search.brave.com';
  return {
    name: 'brave',
    async search(query, { numResults, lang, country, fetch }) {
      const url = endpoint(base, '/res/v1/web/search', {
        q: query,
        count: Math.min(numResults, 20),
        country: country.toUpperCase(),
        search_lang: primaryLanguage(lang),
      });
      const page = await fetch(url, {
        headers: { accept: 'application/json', 'x-subscription-token': options.apiKey },
      });
      if (page.status < 200 || page.status >= 300) {
        const detail = errorDetail(page.text);
        throw new Error(`Brave Search answered HTTP ${page.status}${detail ? `: ${detail}` : ''}`);
      }
      const answer = jsonOf(page, 'Brave Search') as BraveAnswer;
      // Titles and descriptions come with <strong> around the query's words.
      return Promise.all(
        (answer.web?.results ?? []).map(async (result) => ({
          ...(typeof result.url === 'string' ? { url: result.url } : {}),
          ...(typeof result.title === 'string' ? { title: await fragmentText(result.title) } : {}),
          ...(typeof result.description === 'string' ? { description: await fragmentText(result.description) } : {}),
        })),
      );
    },
  };
}

/** What the API said went wrong (a bad key, a quota), if it said so in JSON. */
function errorDetail(body: string): string | undefined {
  try {
    const detail = (JSON.parse(body) as BraveAnswer).error?.detail;
    return typeof detail === 'string' ? detail : undefined;
  } catch {
    return undefined;
  }
}
