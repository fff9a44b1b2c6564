// @openmanus/tools: every OpenManus tool beyond the Manus four, and the agent presets that use them.

// web_search and web_fetch
export { type BaiduEngineOptions, baiduEngine } from './search/baidu.js';
export { type BingEngineOptions, bingEngine } from './search/bing.js';
export { type BraveEngineOptions, braveEngine } from './search/brave.js';
export { type DuckDuckGoEngineOptions, duckDuckGoEngine } from './search/duckduckgo.js';
export { builtInEngines, type EngineEndpoints } from './search/engines.js';
export { formatSearchResponse, type SearchFailure, type SearchResponse } from './search/format.js';
export { type GoogleEngineOptions, googleEngine } from './search/google.js';
export { type SearxngEngineOptions, searxngEngine } from './search/searxng.js';
export { searchOptionsFrom, type WebSearchOptions } from './search/settings.js';
export type { EngineFailure, EngineFetch, EngineHit, EngineQuery, SearchEngine, SearchResult } from './search/types.js';
export { createWebSearch, type SearchCall, searchWeb } from './search/webSearch.js';
export type { HttpPage, HttpRequest } from './web/http.js';
export { createWebFetch, fetchWebPage, type WebFetchOptions, type WebPage } from './webFetch.js';
