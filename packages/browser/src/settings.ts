import type { BrowserSettings, Result } from '@openmanus/core';
import type { NetworkAccess, Resolver, SearchResponse, WebSearchOptions } from '@openmanus/tools';
import type { Browser, BrowserContext } from 'playwright-core';

/** How JavaScript dialogs (alert, confirm, prompt) are answered. */
export type DialogPolicy = 'accept' | 'dismiss' | 'ask';

/** A web search for the `web_search` action: the results, or why there are none (a `ResultAsync`, or a promise of a `Result`). */
export type BrowserSearch = (
  query: string,
  options: { readonly signal: AbortSignal },
) => PromiseLike<Result<SearchResponse, { readonly message: string }>>;

export interface BrowserUseOptions extends NetworkAccess {
  /** Where downloads are saved (`downloads/`) and uploads come from (default: the run's workspace, else `./workspace`). */
  readonly workspace?: string;
  /** Default true (OpenManus: false). */
  readonly headless?: boolean;
  /**
   * Turn web security off (`disable_security`: no same-origin policy, no site isolation, CSP and
   * certificate errors ignored). Default false (OpenManus: true).
   */
  readonly disableSecurity?: boolean;
  /** More Chromium switches (`extra_chromium_args`). */
  readonly extraChromiumArgs?: readonly string[];
  /** The Chrome or Chromium to start (`chrome_instance_path`); default `$CHROME_PATH`, else a standard place. */
  readonly chromeInstancePath?: string;
  /** Connect to a Playwright browser server instead of starting a browser (`wss_url`). */
  readonly wssUrl?: string;
  /** Connect to a running Chrome's DevTools endpoint instead of starting a browser (`cdp_url`). */
  readonly cdpUrl?: string;
  /** A proxy of yours for the browser's traffic (`[browser.proxy]`). */
  readonly proxy?: { readonly server: string; readonly username?: string; readonly password?: string };
  /** Characters of page content extract_content gives the model per call (`max_content_length`; default 30000). */
  readonly maxContentLength?: number;
  /** A browser you started and own: each run gets a context in it, and it is never closed here. */
  readonly browser?: Browser;
  /** Attach a viewport screenshot to every result, for models that see images (default false). */
  readonly vision?: boolean;
  /** Default 1280 × 800. */
  readonly viewport?: { readonly width: number; readonly height: number };
  /** Characters of element lines in a page state at most (default 4000, at most about 1,600 tokens). */
  readonly maxStateChars?: number;
  /** How long an action on an element may wait for it (default 5000 ms). */
  readonly actionTimeoutMs?: number;
  /** How long a page may take to load (default 30000 ms). */
  readonly navigationTimeoutMs?: number;
  /** `accept` (default) and `dismiss` answer dialogs at once and say so; `ask` leaves them to handle_dialog. */
  readonly dialogs?: DialogPolicy;
  /** The web_search action's search: a function, or options for @openmanus/tools' searchWeb (the default). */
  readonly search?: BrowserSearch | WebSearchOptions;
  /** Bytes a download may have (default 100 MB): one that passes them is cancelled as it arrives. */
  readonly maxDownloadBytes?: number;
  /** Downloads a run may keep (default 20); later ones, and any a page starts between actions (more than 2 s after one), are cancelled. */
  readonly maxDownloads?: number;
  /** How the network guard looks host names up (default: the system's DNS), e.g. to map test names. */
  readonly resolve?: Resolver;
  /** Called with each new browser context before any page opens: tracing, logging, routes of your own. */
  readonly onContext?: (context: BrowserContext) => void | Promise<void>;
}

/** `[browser]` of config.toml as options (OpenManus's keys; our defaults where it has none). */
export function browserOptionsFrom(settings: BrowserSettings): BrowserUseOptions {
  return {
    ...(settings.headless !== undefined ? { headless: settings.headless } : {}),
    ...(settings.disable_security !== undefined ? { disableSecurity: settings.disable_security } : {}),
    ...(settings.extra_chromium_args ? { extraChromiumArgs: settings.extra_chromium_args } : {}),
    ...(settings.chrome_instance_path ? { chromeInstancePath: settings.chrome_instance_path } : {}),
    ...(settings.wss_url ? { wssUrl: settings.wss_url } : {}),
    ...(settings.cdp_url ? { cdpUrl: settings.cdp_url } : {}),
    ...(settings.proxy ? { proxy: settings.proxy } : {}),
    ...(settings.max_content_length !== undefined ? { maxContentLength: settings.max_content_length } : {}),
    ...(settings.allow_hosts ? { allowHosts: settings.allow_hosts } : {}),
  };
}
