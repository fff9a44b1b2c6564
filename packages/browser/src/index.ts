// @openmanus/browser: OpenManus's browser_use tool on playwright-core and a system Chrome or Chromium.

export {
  type BrowserAgentOptions,
  browserNextStepPrompt,
  browserSystemPrompt,
  createBrowserAgent,
  withBrowser,
} from './agents/browserAgent.js';
export { PAGE_CONTEXT, type PageContext, pageContext } from './agents/pageContext.js';
export { type BrowserUseTool, createBrowserUse } from './browserUse.js';
export {
  BrowserUnavailableError,
  CHROMIUM_ARGS,
  findChrome,
  STANDARD_CHROME_PATHS,
} from './launch.js';
export { ActionError, type BrowserSession, StaleRefError } from './session.js';
export { type BrowserSearch, type BrowserUseOptions, browserOptionsFrom, type DialogPolicy } from './settings.js';
export { UploadRefusedError } from './upload.js';
