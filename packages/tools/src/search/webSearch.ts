import { defineTool, err, ok, type Result, ResultAsync, type Tool } from '@openmanus/core';
import { z } from 'zod';
import { httpRequest } from '../web/http.js';
import { ANY_ADDRESS } from '../web/networkPolicy.js';
import { runCascade } from './cascade.js';
import { withContent } from './fetchContent.js';
import { describeFailures, formatSearchResponse, type SearchResponse } from './format.js';
import { SearchError } from './searchError.js';
import { COUNTRY_CODE, LANGUAGE_CODE, type ResolvedSearch, resolveSearch, type WebSearchOptions } from './settings.js';

/** One search: what the tool's arguments say. */
export interface SearchCall {
  /** Default 5, at most the options' `maxResults`. */
  readonly numResults?: number;
  readonly lang?: string;
  readonly country?: string;
  /** Fetch each result's page and add its text (default false). */
  readonly fetchContent?: boolean;
  readonly signal?: AbortSignal;
}

/**
 * Searches the web through the engine cascade and answers with data: the results, the engine
 * that gave them and the ones that failed first; or why there are none.
 */
export function searchWeb(
  query: string,
  options: WebSearchOptions & SearchCall = {},
): ResultAsync<SearchResponse, SearchError> {
  return new ResultAsync(search(resolveSearch(options), query, options));
}

async function search(
  settings: ResolvedSearch,
  query: string,
  call: SearchCall,
): Promise<Result<SearchResponse, SearchError>> {
  if (!query.trim()) return err(new SearchError('The query is empty.', []));
  const signal = call.signal ?? new AbortController().signal;
  const lang = call.lang ?? settings.lang;
  const country = call.country ?? settings.country;
  const numResults = Math.max(1, Math.min(Math.trunc(call.numResults ?? 5), settings.maxResults));
  const http = {
    maxBytes: settings.maxBytes,
    ...(settings.userAgent !== undefined ? { userAgent: settings.userAgent } : {}),
    ...(settings.fetch !== undefined ? { fetch: settings.fetch } : {}),
  };
  const outcome = await runCascade(
    {
      engines: settings.engines,
      engineTimeoutMs: settings.engineTimeoutMs,
      retryDelayMs: settings.retryDelayMs,
      maxRetries: settings.maxRetries,
      // The engine's own time limit governs its requests. The engines go where the host's options
      // send them, a SearXNG on its network included; what the results point at is checked.
      fetchFor:
        (engineSignal) =>
        (url, request = {}) =>
          httpRequest(url, request, {
            ...http,
            signal: engineSignal,
            timeoutMs: settings.engineTimeoutMs,
            network: ANY_ADDRESS,
          }),
    },
    { query, numResults, lang, country, signal },
  );
  if (!outcome.isOk()) {
    const { failures, rounds, cancelled } = outcome.error;
    const tried = failures.length > 0 ? `\n${describeFailures(failures)}` : '';
    const message = cancelled
      ? `The search was cancelled.${tried}`
      : `All search engines failed${rounds > 1 ? ` in each of ${rounds} rounds, ${settings.retryDelayMs / 1000} s apart` : ''}:${tried}`;
    return err(new SearchError(message, failures, cancelled));
  }
  const { engine, failures } = outcome.value;
  const results = call.fetchContent
    ? await withContent(
        outcome.value.results,
        {
          ...http,
          timeoutMs: settings.contentTimeoutMs,
          maxChars: settings.contentMaxChars,
          network: settings.network,
        },
        signal,
      )
    : outcome.value.results;
  return ok({ query, results, engine, failures, lang, country });
}

/**
 * OpenManus's web_search: the configured engine first, then the fallbacks, then the rest, until
 * one gives results; optionally each result's page text. Options mistakes throw here, not at the
 * first call.
 */
export function createWebSearch(options: WebSearchOptions = {}): Tool {
  const settings = resolveSearch(options);
  const rounds = settings.maxRetries + 1;
  return defineTool({
    name: 'web_search',
    description:
      'Search the web for current information. Returns the top results with title, URL and description; ' +
      'with fetch_content, also the text of each page. Several search engines are tried in turn if one fails.',
    parameters: z.object({
      query: z.string().trim().min(1).describe('What to search for.'),
      num_results: z
        .number()
        .int()
        .min(1)
        .max(settings.maxResults)
        .default(5)
        .describe(`How many results (default 5, at most ${settings.maxResults}).`),
      lang: z
        .string()
        .regex(LANGUAGE_CODE, { error: 'expected a language code such as "en" or "zh-CN"' })
        .optional()
        .describe(`Language of the results (default ${settings.lang}).`),
      country: z
        .string()
        .regex(COUNTRY_CODE, { error: 'expected a two-letter country code such as "us"' })
        .optional()
        .describe(`Two-letter country code for the results (default ${settings.country}).`),
      fetch_content: z.boolean().default(false).describe("Also fetch each result's page and include its text."),
    }),
    parallelSafe: true,
    // Room for every engine to time out in every round, the waits between rounds and the pages
    // (within what a timer holds).
    timeoutMs: Math.min(
      rounds * settings.engines.length * settings.engineTimeoutMs +
        settings.maxRetries * settings.retryDelayMs +
        settings.contentTimeoutMs +
        10_000,
      2 ** 31 - 1,
    ),
    execute: async (args, scope) => {
      const outcome = await search(settings, args.query, {
        numResults: args.num_results,
        fetchContent: args.fetch_content,
        signal: scope.signal,
        ...(args.lang !== undefined ? { lang: args.lang } : {}),
        ...(args.country !== undefined ? { country: args.country } : {}),
      });
      return outcome.isOk() ? formatSearchResponse(outcome.value) : err(outcome.error.message);
    },
  });
}
