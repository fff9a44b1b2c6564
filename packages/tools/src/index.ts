// @openmanus/tools: every OpenManus tool beyond the Manus four, and the agent presets that use them.

export { createSandboxManus, type SandboxManusOptions } from './agents/sandboxManus.js';
export { createSweAgent, type SweAgentOptions, sweSystemPrompt } from './agents/swe.js';
export { type BashOptions, createBash } from './bash/bashTool.js';
export { ChartError } from './dataAnalysis/chartError.js';
export { CHART_TYPES, type ChartRequest, type ChartType } from './dataAnalysis/chartPlan.js';
export {
  createDataAnalysis,
  type DataAnalysisOptions,
  dataAnalysisNextStepPrompt,
  dataAnalysisSystemPrompt,
} from './dataAnalysis/dataAnalysis.js';
export {
  CHART_DIR,
  CHART_OUTPUTS,
  type ChartOutput,
  createDataVisualization,
  type DataVisualizationOptions,
} from './dataAnalysis/dataVisualization.js';
export { CHART_LANGUAGES, type ChartLanguage } from './dataAnalysis/insights.js';
export { createVisualizationPreparation } from './dataAnalysis/visualizationPreparation.js';
export { createFileSaver, type FileSaverOptions } from './fileSaver.js';
export { DEFAULT_IMAGE_LIMITS, type ImageLimits } from './sandbox/imageForModel.js';
export { withPreviewLinks } from './sandbox/previewLinks.js';
export { createSandboxBrowser, type SandboxBrowserOptions } from './sandbox/sandboxBrowser.js';
export { createSandboxVision, type SandboxVisionOptions } from './sandbox/sandboxVision.js';
export { type BaiduEngineOptions, baiduEngine } from './search/baidu.js';
export { type BingEngineOptions, bingEngine } from './search/bing.js';
export { type BraveEngineOptions, braveEngine } from './search/brave.js';
export { type DuckDuckGoEngineOptions, duckDuckGoEngine } from './search/duckduckgo.js';
export { builtInEngines, type EngineEndpoints } from './search/engines.js';
export { formatSearchResponse, type SearchResponse } from './search/format.js';
export { type GoogleEngineOptions, googleEngine } from './search/google.js';
export { SearchError } from './search/searchError.js';
export { type SearxngEngineOptions, searxngEngine } from './search/searxng.js';
export { searchOptionsFrom, type WebSearchOptions } from './search/settings.js';
export type { EngineFailure, EngineFetch, EngineHit, EngineQuery, SearchEngine, SearchResult } from './search/types.js';
export { createWebSearch, type SearchCall, searchWeb } from './search/webSearch.js';
export {
  CHAT_COMPLETION_TOOL,
  type ChatCompletionInput,
  type ChatCompletionOptions,
  type ChatCompletionToolOptions,
  createChatCompletion,
  createChatCompletionTool,
  StructuredOutputError,
  type StructuredOutputFailure,
} from './structuredOutput.js';
export { addressRefusal, connectionLookup, type HostTarget } from './web/addressCheck.js';
export type { HttpPage, HttpRequest } from './web/http.js';
export { type ReadablePage, readableMarkdown } from './web/markdown.js';
export { AddressRefusedError, type NetworkAccess, type NetworkPolicy, networkPolicy } from './web/networkPolicy.js';
export type { Resolver } from './web/transport.js';
export { WebFetchError } from './web/webFetchError.js';
export { WorkerTimeoutError } from './web/workerJob.js';
export { createWebFetch, fetchWebPage, type WebFetchOptions, type WebPage } from './webFetch.js';
export { WorkspaceFileError } from './workspace.js';
