import type { HttpPage, HttpRequest } from '../web/http.js';

/** One search hit, the same shape from every engine. */
export interface SearchResult {
  /** The page's title (`Result {i}` when the engine gave none). */
  readonly title: string;
  /** An absolute http(s) URL. */
  readonly url: string;
  readonly description?: string;
  /** The page's own text, when the search was asked to fetch it. */
  readonly content?: string;
  /** Why the page was not fetched: its address is not one the web tools may reach. */
  readonly contentRefused?: string;
}

/** What an engine found, before it is checked: results without a URL are dropped, titles filled in. */
export interface EngineHit {
  readonly title?: string;
  readonly url?: string;
  readonly description?: string;
}

/**
 * HTTP for one engine call: bound to its signal and time limit, http(s) only, the body capped,
 * a browser's User-Agent unless the request sets its own.
 */
export type EngineFetch = (url: string, request?: HttpRequest) => Promise<HttpPage>;

export interface EngineQuery {
  readonly numResults: number;
  /** A language code (`en`, `zh-CN`); engines without a language parameter ignore it. */
  readonly lang: string;
  /** A two-letter country code (`us`); engines without a region parameter ignore it. */
  readonly country: string;
  readonly signal: AbortSignal;
  readonly fetch: EngineFetch;
}

/** A search engine: the results for a query, or an Error saying why there are none. */
export interface SearchEngine {
  readonly name: string;
  search(query: string, options: EngineQuery): Promise<readonly EngineHit[]>;
}

/** An engine that did not give results, and why. */
export interface EngineFailure {
  readonly engine: string;
  readonly reason: string;
  /** Which round of the cascade (1 is the first try; each retry is one more). */
  readonly round: number;
}
