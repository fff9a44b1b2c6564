import type { CDPSession, Download, Page } from 'playwright-core';

/** How a page's downloads grow while they arrive, from Chromium's DevTools events. */
export interface DownloadSizes {
  /**
   * Resolves with the bytes known once `download` is (or says it will be) larger than `max`;
   * never, while it stays within it.
   */
  passes(download: Download, max: number): Promise<number>;
  close(): Promise<void>;
}

interface Progress {
  readonly guid: string;
  readonly url: string;
  readonly name: string;
  bytes: number;
  taken: boolean;
  onGrow?: (bytes: number) => void;
}

/**
 * Playwright tells of a download only when it is complete, by then whole on disk: Chromium's
 * `Page.downloadProgress` says how much has arrived (and the size the server announced), so a
 * download can be cancelled as soon as it passes its cap. A browser without them (not Chromium)
 * has its downloads checked once complete.
 */
export async function watchDownloadSizes(page: Page): Promise<DownloadSizes> {
  let session: CDPSession | undefined;
  const downloads: Progress[] = [];
  try {
    session = await page.context().newCDPSession(page);
    session.on('Page.downloadWillBegin', ({ guid, url, suggestedFilename }) => {
      downloads.push({ guid, url, name: suggestedFilename, bytes: 0, taken: false });
    });
    session.on('Page.downloadProgress', ({ guid, receivedBytes, totalBytes, state }) => {
      const download = downloads.find((candidate) => candidate.guid === guid);
      if (!download) return;
      if (state !== 'inProgress') {
        downloads.splice(downloads.indexOf(download), 1);
        return;
      }
      download.bytes = Math.max(receivedBytes, totalBytes);
      download.onGrow?.(download.bytes);
    });
    await session.send('Page.enable');
  } catch {
    // Not Chromium, or the page closed already.
  }
  return {
    passes(download, max) {
      const progress = downloads.find(
        (candidate) =>
          !candidate.taken && candidate.url === download.url() && candidate.name === download.suggestedFilename(),
      );
      if (!progress) return new Promise(() => {});
      progress.taken = true;
      return new Promise((resolve) => {
        const check = (bytes: number) => {
          if (bytes > max) resolve(bytes);
        };
        progress.onGrow = check;
        check(progress.bytes);
      });
    },
    close: async () => {
      await session?.detach().catch(() => {});
    },
  };
}
