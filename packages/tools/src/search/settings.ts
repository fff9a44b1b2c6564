import type { SearchSettings } from '@openmanus/core';
import { type NetworkAccess, type NetworkPolicy, networkPolicy } from '../web/networkPolicy.js';
import { engineOrder } from './cascade.js';
import { builtInEngines, ENGINE_NEEDS, type EngineEndpoints } from './engines.js';
import type { SearchEngine } from './types.js';

/**
 * The network options govern what `fetch_content` fetches (the result pages, from wherever the
 * results point): public addresses only by default. The engines' own requests go where the
 * options send them (a SearXNG on your network included).
 */
export interface WebSearchOptions extends EngineEndpoints, NetworkAccess {
  /** The engine tried first, in any case (default google). */
  readonly engine?: string;
  /** Tried next, in order (default duckduckgo, baidu, bing); then every other available engine. */
  readonly fallbackEngines?: readonly string[];
  /** Seconds to wait, when every engine failed, before trying them all again (default 60). */
  readonly retryDelaySec?: number;
  /** How many times to try them all again (default 3). */
  readonly maxRetries?: number;
  /** The results' language when the call names none (default en). */
  readonly lang?: string;
  /** The results' country when the call names none (default us). */
  readonly country?: string;
  /**
   * The engines to choose from, instead of the built-in ones: e.g. only your SearXNG, or
   * `[...builtInEngines(options), companyIndex]`.
   */
  readonly engines?: readonly SearchEngine[];
  /** Seconds one engine may take (default 15). */
  readonly engineTimeoutSec?: number;
  /** Most results a call may ask for (default 20). */
  readonly maxResults?: number;
  /** `fetch_content`: seconds per page (default 10). */
  readonly contentTimeoutSec?: number;
  /** `fetch_content`: characters of a page's text kept (default 10000). */
  readonly contentMaxChars?: number;
  /** Bytes read of any one response, result page or fetched page (default 2 MB). */
  readonly maxBytes?: number;
  /** Default: a desktop browser's. */
  readonly userAgent?: string;
  /**
   * The HTTP transport (default undici's `fetch`), e.g. one through a proxy. It resolves names
   * itself: only IP addresses in result URLs are checked against the network options then.
   */
  readonly fetch?: typeof globalThis.fetch;
}

/** What `lang` may be: a language code such as `en` or `zh-CN`. */
export const LANGUAGE_CODE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;
/** What `country` may be: a two-letter country code such as `us`. */
export const COUNTRY_CODE = /^[A-Za-z]{2}$/;

/** The options, checked, with OpenManus's defaults filled in and the engines in the order they are tried. */
export interface ResolvedSearch {
  readonly engines: readonly SearchEngine[];
  readonly retryDelayMs: number;
  readonly maxRetries: number;
  readonly lang: string;
  readonly country: string;
  readonly engineTimeoutMs: number;
  readonly maxResults: number;
  readonly contentTimeoutMs: number;
  readonly contentMaxChars: number;
  readonly maxBytes: number;
  /** Where the result pages may come from. */
  readonly network: NetworkPolicy;
  readonly userAgent?: string;
  readonly fetch?: typeof globalThis.fetch;
}

/** The options `[search]` of config.toml stands for (`loadConfig().value.search`). */
export function searchOptionsFrom(settings: SearchSettings): WebSearchOptions {
  return {
    ...(settings.engine !== undefined ? { engine: settings.engine } : {}),
    ...(settings.fallback_engines !== undefined ? { fallbackEngines: settings.fallback_engines } : {}),
    ...(settings.retry_delay !== undefined ? { retryDelaySec: settings.retry_delay } : {}),
    ...(settings.max_retries !== undefined ? { maxRetries: settings.max_retries } : {}),
    ...(settings.lang !== undefined ? { lang: settings.lang } : {}),
    ...(settings.country !== undefined ? { country: settings.country } : {}),
    ...(settings.searxng_url !== undefined ? { searxngUrl: settings.searxng_url } : {}),
    ...(settings.brave_api_key !== undefined ? { braveApiKey: settings.brave_api_key } : {}),
  };
}

/** Checks the options (a mistake throws, naming the option) and fills in the defaults. */
export function resolveSearch(options: WebSearchOptions = {}): ResolvedSearch {
  const pool = options.engines ?? builtInEngines(options);
  const available = new Map(pool.map((engine) => [engine.name.toLowerCase(), engine]));
  if (available.size === 0) throw new Error('web_search: no search engines to use');
  for (const name of [...(options.engine ? [options.engine] : []), ...(options.fallbackEngines ?? [])]) {
    if (available.has(name.toLowerCase())) continue;
    const needs = options.engines ? undefined : ENGINE_NEEDS[name.toLowerCase()];
    throw new Error(
      needs
        ? `web_search: the ${name.toLowerCase()} engine needs ${needs}`
        : `web_search: unknown search engine '${name}' (available: ${[...available.keys()].join(', ')})`,
    );
  }
  // OpenManus's defaults, as far as the engines at hand allow.
  const preferred = options.engine ?? (available.has('google') ? 'google' : ([...available.keys()][0] ?? ''));
  const fallbacks = options.fallbackEngines ?? ['duckduckgo', 'baidu', 'bing'].filter((name) => available.has(name));
  const names = engineOrder(preferred, fallbacks, [...available.keys()]);
  return {
    engines: names.flatMap((name) => available.get(name) ?? []),
    retryDelayMs: seconds('retryDelaySec', options.retryDelaySec ?? 60, { zero: true }),
    maxRetries: count('maxRetries', options.maxRetries ?? 3, 0, 10),
    lang: code('lang', options.lang ?? 'en', LANGUAGE_CODE, 'a language code'),
    country: code('country', options.country ?? 'us', COUNTRY_CODE, 'a country code'),
    engineTimeoutMs: seconds('engineTimeoutSec', options.engineTimeoutSec ?? 15),
    maxResults: count('maxResults', options.maxResults ?? 20, 1, 100),
    contentTimeoutMs: seconds('contentTimeoutSec', options.contentTimeoutSec ?? 10),
    contentMaxChars: count('contentMaxChars', options.contentMaxChars ?? 10_000, 1, 1_000_000),
    maxBytes: count('maxBytes', options.maxBytes ?? 2 * 1024 * 1024, 1, 100 * 1024 * 1024),
    network: networkPolicy(options, 'web_search'),
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
  };
}

/** Seconds as milliseconds, within what a timer holds (a day). */
function seconds(name: string, value: number, { zero = false } = {}): number {
  if (!(value <= 86_400 && (zero ? value >= 0 : value > 0))) {
    throw new RangeError(
      `web_search: ${name} must be ${zero ? 'from 0' : 'more than 0'} to 86400 seconds, got ${value}`,
    );
  }
  return value * 1000;
}

function code(name: string, value: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value)) throw new RangeError(`web_search: ${name} ${JSON.stringify(value)} is not ${what}`);
  return value;
}

function count(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`web_search: ${name} must be a whole number from ${min} to ${max}, got ${value}`);
  }
  return value;
}
