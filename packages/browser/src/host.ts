import type { Browser } from 'playwright-core';
import { BrowserUnavailableError } from './launch.js';

/** A run's hold on the shared browser. */
export interface BrowserLease {
  /** The browser: started on first use, and again after it closed or crashed. */
  browser(): Promise<Browser>;
  /** Lets go; when the last lease is let go, a browser the host started is closed. */
  release(): Promise<void>;
}

export interface BrowserHost {
  lease(): BrowserLease;
}

/**
 * One browser process shared by the runs of a tool, each in a context of its own: started when a
 * run first needs it, closed when no run holds it any more, started again when it is needed after
 * closing or crashing. A browser the host was given (`given`) is the caller's: never closed here.
 */
export function createBrowserHost(start: () => Promise<Browser>, given?: Browser): BrowserHost {
  let current: Promise<Browser> | undefined;
  let holders = 0;

  const browser = (): Promise<Browser> => {
    if (given) {
      if (!given.isConnected()) throw new BrowserUnavailableError('the browser passed to createBrowserUse has closed');
      return Promise.resolve(given);
    }
    if (!current) {
      const starting = start();
      current = starting;
      // A browser that closed or failed to start is started afresh next time.
      const forget = () => {
        if (current === starting) current = undefined;
      };
      starting.then((started) => started.on('disconnected', forget), forget);
    }
    return current;
  };

  return {
    lease() {
      holders++;
      let released = false;
      return {
        browser,
        async release() {
          if (released) return;
          released = true;
          holders--;
          if (holders > 0 || given || !current) return;
          const closing = current;
          current = undefined;
          await closing.then((started) => started.close()).catch(() => {});
        },
      };
    },
  };
}
