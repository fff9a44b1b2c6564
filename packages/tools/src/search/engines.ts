import type { SearchEngineName } from '@openmanus/core';
import { baiduEngine } from './baidu.js';
import { bingEngine } from './bing.js';
import { braveEngine } from './brave.js';
import { duckDuckGoEngine } from './duckduckgo.js';
import { googleEngine } from './google.js';
import { searxngEngine } from './searxng.js';
import type { SearchEngine } from './types.js';

/** Where the built-in engines are and their keys; the defaults are the real endpoints. */
export interface EngineEndpoints {
  /** Other addresses for the engines (a proxy, a test server). */
  readonly baseUrls?: Partial<Record<Exclude<SearchEngineName, 'searxng'>, string>>;
  /** A SearXNG instance: makes the searxng engine available. */
  readonly searxngUrl?: string;
  /** A Brave Search API key: makes the brave engine available. */
  readonly braveApiKey?: string;
}

const withBase = (url: string | undefined) => (url ? { baseUrl: url } : {});

/** Every engine `[search]` can name; in OpenManus's order, which is also the order of "the rest". */
const BUILT_IN: { readonly [name in SearchEngineName]: (endpoints: EngineEndpoints) => SearchEngine | undefined } = {
  google: ({ baseUrls }) => googleEngine(withBase(baseUrls?.google)),
  baidu: ({ baseUrls }) => baiduEngine(withBase(baseUrls?.baidu)),
  duckduckgo: ({ baseUrls }) => duckDuckGoEngine(withBase(baseUrls?.duckduckgo)),
  bing: ({ baseUrls }) => bingEngine(withBase(baseUrls?.bing)),
  // The API engines exist only with their address or key.
  searxng: ({ searxngUrl }) => (searxngUrl ? searxngEngine({ baseUrl: searxngUrl }) : undefined),
  brave: ({ baseUrls, braveApiKey }) =>
    braveApiKey ? braveEngine({ apiKey: braveApiKey, ...withBase(baseUrls?.brave) }) : undefined,
};

/** What each API engine needs before it can be used. */
export const ENGINE_NEEDS: Readonly<Record<string, string>> = {
  searxng: 'searxngUrl ([search] searxng_url)',
  brave: 'braveApiKey ([search] brave_api_key)',
};

/** The built-in engines these endpoints allow, in OpenManus's order (the API engines last, when configured). */
export function builtInEngines(endpoints: EngineEndpoints = {}): SearchEngine[] {
  return Object.values(BUILT_IN).flatMap((make) => make(endpoints) ?? []);
}
