import { accessSync, constants, statSync } from 'node:fs';
import { hasErrorCode, OpenManusError } from '@openmanus/core';
import type { Browser } from 'playwright-core';
import { markOwnProfiles, sweepStaleProfiles } from './profiles.js';

/** How the browser is started, or which running one is used: OpenManus's `[browser]` keys. */
export interface LaunchSettings {
  /** The Chrome or Chromium to start (`chrome_instance_path`); default `$CHROME_PATH`, else a standard place. */
  readonly executablePath?: string;
  /** Default true (OpenManus: false). */
  readonly headless: boolean;
  /** Turn web security off (`disable_security`): same-origin policy, site isolation, CSP. Default false (OpenManus: true). */
  readonly disableSecurity: boolean;
  readonly extraArgs: readonly string[];
  /** A Playwright browser server to connect to (`wss_url`) instead of starting one. */
  readonly wssUrl?: string;
  /** A running Chrome's DevTools endpoint to connect to (`cdp_url`) instead of starting one. */
  readonly cdpUrl?: string;
}

/** Where Chrome and Chromium are installed by the usual packages, in the order they are tried. */
export const STANDARD_CHROME_PATHS: readonly string[] = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
  '/opt/google/chrome/chrome',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

/**
 * Always passed: no GPU, no QUIC (everything goes over TCP, where the network policy holds), no
 * background traffic of the browser's own, and WebRTC kept from sending UDP past the proxy (a page
 * would otherwise have it send STUN and ICE packets to any address it names, this machine's too). No
 * Chromium sandbox: it cannot start as root, as agents often run.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/** With `disableSecurity`, as browser-use (which OpenManus uses) turns web security off. */
const INSECURE_ARGS = [
  '--disable-web-security',
  '--disable-site-isolation-trials',
  '--disable-features=IsolateOrigins,site-per-process',
];

const HOW_TO_INSTALL =
  'Install one — `apt-get install chromium` on Debian/Ubuntu, or `bash scripts/setup.sh` in OpenManus-TS — ' +
  'or name yours with CHROME_PATH or [browser].chrome_instance_path in config.toml.';

/** No browser could be started or reached; the message says why and what to do. */
export class BrowserUnavailableError extends OpenManusError<'BROWSER_UNAVAILABLE'> {
  static readonly codes = ['BROWSER_UNAVAILABLE'] as const;
  override readonly name = 'BrowserUnavailableError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('BROWSER_UNAVAILABLE', message, options);
  }
  static override isInstance(value: unknown): value is BrowserUnavailableError {
    return hasErrorCode(value, BrowserUnavailableError.codes);
  }
}

export const isExecutableFile = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/**
 * The Chrome to start: the one configured, else `$CHROME_PATH`, else the first standard place that
 * has one. A configured path that is not there is an error rather than a silent fallback.
 */
export function findChrome(
  configured: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  isExecutable: (path: string) => boolean = isExecutableFile,
): string {
  for (const [path, source] of [
    [configured, '[browser].chrome_instance_path'],
    [env.CHROME_PATH || undefined, 'CHROME_PATH'],
  ] as const) {
    if (path === undefined) continue;
    if (isExecutable(path)) return path;
    throw new BrowserUnavailableError(`${source} names ${path}, which is not an executable file. ${HOW_TO_INSTALL}`);
  }
  const found = STANDARD_CHROME_PATHS.find(isExecutable);
  if (found) return found;
  throw new BrowserUnavailableError(
    `No Chrome or Chromium found (looked for CHROME_PATH and in ${STANDARD_CHROME_PATHS.join(', ')}). ${HOW_TO_INSTALL}`,
  );
}

/** The command-line switches for a browser started with these settings. */
export const chromiumArgs = (settings: LaunchSettings): string[] => [
  ...CHROMIUM_ARGS,
  ...(settings.disableSecurity ? INSECURE_ARGS : []),
  ...settings.extraArgs,
];

/** Starts the browser the settings describe, or connects to it; an error says why not. */
export async function launchBrowser(settings: LaunchSettings, env = process.env): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  if (settings.wssUrl) {
    return chromium.connect(settings.wssUrl).catch((error: unknown) => {
      throw new BrowserUnavailableError(
        `could not connect to the browser at wss_url ${settings.wssUrl}: ${firstLine(error)}`,
      );
    });
  }
  if (settings.cdpUrl) {
    return chromium.connectOverCDP(settings.cdpUrl).catch((error: unknown) => {
      throw new BrowserUnavailableError(
        `could not connect to the browser at cdp_url ${settings.cdpUrl}: ${firstLine(error)}`,
      );
    });
  }
  const executablePath = findChrome(settings.executablePath, env);
  // What a process killed outright left behind: its browsers' profiles (cookies, storage).
  await sweepStaleProfiles();
  let browser: Browser;
  try {
    browser = await chromium.launch({
      executablePath,
      headless: settings.headless,
      args: chromiumArgs(settings),
      // The host decides what a signal does (the CLI cancels its runs first); the browser ends with
      // this process all the same, when the pipe to it closes.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (error) {
    const display = settings.headless ? '' : ' (headless = false needs a display: set DISPLAY, or run headless)';
    throw new BrowserUnavailableError(`${executablePath} could not be started${display}: ${firstLine(error)}`);
  }
  await markOwnProfiles();
  return browser;
}

export const firstLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
