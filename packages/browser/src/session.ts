import { hasErrorCode, type ImageData, OpenManusError } from '@openmanus/core';
import type { NetworkPolicy, Resolver } from '@openmanus/tools';
import type { Browser, BrowserContext, Dialog, Download, Locator, Page, Request } from 'playwright-core';
import { REF_PATTERN } from './actionSchema.js';
import { type DownloadSizes, watchDownloadSizes } from './downloadSizes.js';
import { saveDownload } from './downloads.js';
import type { BrowserLease } from './host.js';
import { firstLine } from './launch.js';
import { createLock, type Lock } from './lock.js';
import { type GuardProxy, type RefusalLog, routeGuard, startGuardProxy } from './networkGuard.js';
import { pageContent } from './pageContent.js';
import { describePage, type OpenDialog, type PageFacts, type ScrollPosition } from './pageState.js';
import type { DialogPolicy } from './settings.js';
import { clip } from './shown.js';
import { ariaNodes } from './snapshot/ariaNode.js';
import { compactElements } from './snapshot/compact.js';
import { describeChanges, diffElements } from './snapshot/diff.js';
import { type PageElement, pageElements } from './snapshot/elements.js';
import { addTab, focusTab, noTabs, removeTab, type TabList } from './tabs.js';

/** What Playwright says when the page, context or browser went away under it. */
export const CLOSED =
  /Target page, context or browser has been closed|Browser has been closed|browser has disconnected/i;

/** What a session needs, resolved from the tool's options. */
export interface SessionConfig {
  readonly lease: BrowserLease;
  readonly workspace: string;
  /** `proxy`: our checking proxy in front of the browser; `route`: URLs checked by route; `none`: any address. */
  readonly guard: 'proxy' | 'route' | 'none';
  readonly network: NetworkPolicy;
  readonly resolve?: Resolver;
  /** A proxy of the user's, for the browser's traffic. */
  readonly proxy?: { readonly server: string; readonly username?: string; readonly password?: string };
  readonly disableSecurity: boolean;
  readonly viewport: { readonly width: number; readonly height: number };
  readonly actionTimeoutMs: number;
  readonly navigationTimeoutMs: number;
  readonly dialogs: DialogPolicy;
  readonly maxStateChars: number;
  readonly maxDownloadBytes: number;
  /** Downloads a run may keep. */
  readonly maxDownloads: number;
  readonly onContext?: (context: BrowserContext) => void | Promise<void>;
}

/**
 * A run's browser: its own context (tabs, cookies, storage) in the shared browser, started on first
 * use and again after the browser closed or crashed; closed when the run ends. For hosts (a context
 * provider) it gives the page state and a screenshot of the current tab.
 */
export interface BrowserSession {
  /** The current tab's state as the model reads it (URL, tabs, scroll, events, elements near the viewport). */
  state(): Promise<string>;
  /** A screenshot of the current tab: the viewport (or the whole page), JPEG. */
  screenshot(options?: { readonly fullPage?: boolean }): Promise<ImageData>;
  /** Closes the context; the browser itself is closed when no run uses it. */
  close(): Promise<void>;
}

/** A ref that does not (any longer) name an element of the current page. */
export class StaleRefError extends OpenManusError<'STALE_REF'> {
  static readonly codes = ['STALE_REF'] as const;
  override readonly name = 'StaleRefError';
  constructor(readonly ref: string) {
    super('STALE_REF', `ref ${ref} is not on the page (any more)`);
  }
  static override isInstance(value: unknown): value is StaleRefError {
    return hasErrorCode(value, StaleRefError.codes);
  }
}

/** An action that cannot be done as asked; the message is for the model. */
export class ActionError extends OpenManusError<'BROWSER_ACTION'> {
  static readonly codes = ['BROWSER_ACTION'] as const;
  override readonly name = 'ActionError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('BROWSER_ACTION', message, options);
  }
  static override isInstance(value: unknown): value is ActionError {
    return hasErrorCode(value, ActionError.codes);
  }
}

/** What an action caused, for what to report. */
export interface Acted {
  /** The page loaded another document or changed its URL, or another tab is now current. */
  readonly moved: boolean;
  /** Requests the action started that were still running when the wait ended. */
  readonly pending: number;
  /** A dialog opened and waits for handle_dialog (policy `ask`). */
  readonly dialogOpened: boolean;
}

export interface Session extends BrowserSession {
  readonly config: SessionConfig;
  /** One action at a time, whoever asks (the model's parallel calls, a context provider). */
  readonly lock: Lock;
  /** The current tab's page, the context and a first tab opened when needed. */
  page(): Promise<Page>;
  /** The element a ref names on the current page, checked to exist (else StaleRefError, at once). */
  locate(ref: string): Promise<Locator>;
  /** Runs `work` on the current page and waits for what it caused: a load, requests, a new tab, downloads. */
  act(work: (page: Page) => Promise<unknown>): Promise<Acted>;
  /** After an action: the full state when the page moved, else what changed since the last state. */
  report(acted: Acted): Promise<string>;
  /** The page state, within an action (`state()` waits for the lock). */
  fullState(): Promise<string>;
  /** A screenshot, within an action (`screenshot()` waits for the lock). */
  capture(options?: { readonly fullPage?: boolean }): Promise<ImageData>;
  openTab(url: string): Promise<Acted>;
  switchTab(id: number): Acted;
  closeTab(id?: number): Promise<Acted>;
  currentTabId(): number | undefined;
  readonly dialog: {
    open(): OpenDialog | undefined;
    /** Answers the open dialog and waits for what it was blocking. */
    answer(accept: boolean, promptText?: string): Promise<Acted>;
  };
  /** Why a URL was refused by the network policy, if it was. */
  refusalFor(url: string): string | undefined;
  /**
   * Whether the browser (or this run's context) went away: after an error that says the target
   * closed, so that the action can be tried again in a new one.
   */
  lost(): Promise<boolean>;
  /** An event for the next state. */
  note(event: string): void;
  /** How the last state showed the element (`button "Save" [ref=e4]`), or just its ref. */
  describe(ref: string): string;
}

interface Tab {
  readonly id: number;
  readonly page: Page;
  title: string;
  /** The HTTP status of its document's response. */
  status?: number;
  /** Documents loaded in it so far: a new one means the old refs are gone. */
  documents: number;
  closedByUs: boolean;
  /** Its renderer crashed: the page is opened again in a new tab when the tab is next used. */
  crashed: boolean;
  /** How many crashed tabs before it held its page (a page that crashes again is not opened again). */
  reopened: number;
}

interface Baseline {
  readonly tab: number;
  readonly documents: number;
  readonly url: string;
  readonly elements: readonly PageElement[];
}

const SETTLE_MS = 50;
/**
 * Chromium tells of a download some time after the page's script started it (seconds on a loaded
 * machine): one told this soon after an action ends is still that action's doing.
 */
const DOWNLOAD_AFTERMATH_MS = 2000;
/** Characters a state may have besides its elements (`maxStateChars`): the URL, tabs, events, a dialog. */
const MAX_HEAD_CHARS = 4000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `work`, at most `ms` (its timer cleared then, so it keeps nothing alive). */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** Scroll position of the page (runs in the page). */
const readScroll = (): ScrollPosition => {
  const page = globalThis as unknown as {
    scrollY: number;
    innerHeight: number;
    document: { documentElement: { scrollHeight: number }; body?: { scrollHeight: number } };
  };
  const height = Math.max(page.document.documentElement.scrollHeight, page.document.body?.scrollHeight ?? 0);
  return { y: page.scrollY, height, viewportHeight: page.innerHeight };
};

export function createSession(config: SessionConfig): Session {
  const lock = createLock();
  let context: BrowserContext | undefined;
  let contextLost = false;
  let proxy: GuardProxy | undefined;
  let refusals: RefusalLog | undefined;
  let tabList: TabList = noTabs;
  const tabs = new Map<number, Tab>();
  let events: string[] = [];
  let consoleErrors = 0;
  /** Downloads the run's actions started so far. */
  let downloads = 0;
  let baseline: Baseline | undefined;
  let openDialog: { dialog: Dialog; tab: number; blocked?: Promise<unknown> } | undefined;
  let dialogOpened: (() => void) | undefined;
  /** While an action runs: what it started. */
  let watch: { requests: Set<Request>; seen: number; newTabs: number[]; downloads: Promise<unknown>[] } | undefined;
  /** When the last action ended. */
  let actionEnded = Number.NEGATIVE_INFINITY;
  let closed = false;
  /** Tabs the page closed itself since the last state. */
  let closedByPage: { id: number; context: BrowserContext }[] = [];
  /** Tabs we are opening ourselves (not the page's doing). */
  let opening = 0;

  const note = (event: string) => void events.push(event);
  const current = (): Tab | undefined => (tabList.current === undefined ? undefined : tabs.get(tabList.current));

  function register(page: Page): Tab {
    const added = addTab(tabList, tabList.current === undefined);
    tabList = added.tabs;
    const tab: Tab = { id: added.id, page, title: '', documents: 0, closedByUs: false, crashed: false, reopened: 0 };
    tabs.set(tab.id, tab);
    const refreshTitle = () =>
      page.title().then(
        (title) => {
          tab.title = title;
        },
        () => {},
      );
    page.on('domcontentloaded', () => {
      tab.documents++;
      void refreshTitle();
    });
    page.on('load', () => void refreshTitle());
    page.on('response', (response) => {
      if (response.request().isNavigationRequest() && response.frame() === page.mainFrame()) {
        tab.status = response.status();
      }
    });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors++;
    });
    page.on('pageerror', () => void consoleErrors++);
    page.on('dialog', (dialog) => onDialog(dialog, tab));
    page.on('crash', () => {
      tab.crashed = true;
    });
    const sizes = watchDownloadSizes(page);
    page.on('download', (download) => {
      const asked = watch !== undefined || Date.now() - actionEnded <= DOWNLOAD_AFTERMATH_MS;
      const saving = sizes.then((watching) => onDownload(download, watching, asked));
      if (watch) watch.downloads.push(saving);
    });
    page.on('close', () => {
      void sizes.then((watching) => watching.close());
      // A tab of a context gone with its browser is not one of the tabs now.
      if (tabs.get(tab.id) !== tab) return;
      tabList = removeTab(tabList, tab.id);
      tabs.delete(tab.id);
      if (openDialog?.tab === tab.id) openDialog = undefined;
      // Told at the next state, unless the whole context went (then that is what is told).
      if (!tab.closedByUs) closedByPage.push({ id: tab.id, context: page.context() });
    });
    return tab;
  }

  /**
   * Keeps a download the model's action started, within the run's count of files and the byte cap
   * (cancelled as soon as it passes it); one the page starts between actions (told more than
   * DOWNLOAD_AFTERMATH_MS after the last one ended) is cancelled. The
   * browser's own copy is deleted either way.
   */
  async function onDownload(download: Download, sizes: DownloadSizes, asked: boolean): Promise<void> {
    const name = download.suggestedFilename();
    const cancel = async (why: string) => {
      note(`the download of ${name} was cancelled: ${why}; nothing was kept`);
      await download.cancel().catch(() => {});
    };
    try {
      if (!asked) return await cancel('the page started it between actions');
      if (++downloads > config.maxDownloads) {
        return await cancel(`this run has had its ${config.maxDownloads} downloads`);
      }
      const max = config.maxDownloadBytes;
      const saving = saveDownload(download, config.workspace, max).then(
        (saved) => () => note(`downloaded ${name} → ${saved.path} (${saved.bytes} bytes)`),
        (error: unknown) => () => note(`the download of ${name} failed: ${firstLine(error)}`),
      );
      const tooLarge = sizes.passes(download, max).then((bytes) => async () => {
        await cancel(`it is larger than ${max} bytes (${bytes} and more)`);
        // Its save fails with the cancel, and removes what it began.
        await saving;
      });
      await (await Promise.race([saving, tooLarge]))();
    } finally {
      await download.delete().catch(() => {});
    }
  }

  function onDialog(dialog: Dialog, tab: Tab) {
    const what = `${dialog.type()} ${JSON.stringify(dialog.message().slice(0, 300))}`;
    if (config.dialogs === 'ask' && dialog.type() !== 'beforeunload') {
      openDialog = { dialog, tab: tab.id };
      dialogOpened?.();
      return;
    }
    // Leaving a page is never stopped by a dialog: the model asked to go.
    const accept = config.dialogs !== 'dismiss' || dialog.type() === 'beforeunload';
    note(`${what} was ${accept ? 'accepted' : 'dismissed'} automatically`);
    // A prompt accepted unasked gets the answer the page suggested.
    (accept ? dialog.accept(dialog.defaultValue()) : dialog.dismiss()).catch(() => {});
  }

  async function ensureContext(): Promise<BrowserContext> {
    if (closed) throw new ActionError('the browser session has ended');
    if (context && !contextLost && context.browser()?.isConnected() !== false) return context;
    if (context) contextLost = true;
    if (contextLost) {
      note('the browser had closed or crashed; a new one was started (the tabs before are gone)');
      tabs.clear();
      tabList = noTabs;
      baseline = undefined;
      openDialog = undefined;
    }
    const browser: Browser = await config.lease.browser();
    if (config.guard === 'proxy') proxy ??= await startGuardProxy(config.network, config.resolve);
    const created = await browser.newContext({
      viewport: config.viewport,
      acceptDownloads: true,
      // A service worker's requests would not go through the context's routes.
      serviceWorkers: 'block',
      ...(proxy ? { proxy: { server: proxy.server } } : config.proxy ? { proxy: config.proxy } : {}),
      ...(config.disableSecurity ? { bypassCSP: true, ignoreHTTPSErrors: true } : {}),
    });
    created.setDefaultTimeout(config.actionTimeoutMs);
    created.setDefaultNavigationTimeout(config.navigationTimeoutMs);
    await config.onContext?.(created);
    refusals = config.guard === 'route' ? await routeGuard(created, config.network, config.resolve) : proxy;
    created.on('close', () => {
      if (context === created) contextLost = true;
    });
    created.on('page', (page) => {
      const tab = register(page);
      if (opening > 0) return;
      if (watch) watch.newTabs.push(tab.id);
      else note(`the page opened tab [${tab.id}] on its own`);
    });
    created.on('request', (request) => {
      if (!watch) return;
      watch.requests.add(request);
      watch.seen++;
    });
    const done = (request: Request) => watch?.requests.delete(request);
    created.on('requestfinished', done);
    created.on('requestfailed', done);
    context = created;
    contextLost = false;
    return created;
  }

  async function page(): Promise<Page> {
    const ready = await ensureContext();
    const tab = current();
    if (tab?.crashed) return reopen(ready, tab);
    if (tab) return tab.page;
    // The 'page' event registers it (and makes it current, as no tab is).
    return newTab(ready);
  }

  /**
   * A crashed tab ("Page crashed" to every call) is replaced by a new tab with its page opened
   * again, and the model is told; a page that crashes again gets a blank tab.
   */
  async function reopen(ready: BrowserContext, crashed: Tab): Promise<Page> {
    const url = crashed.page.url();
    const fresh = await newTab(ready);
    const tab = [...tabs.values()].find((candidate) => candidate.page === fresh);
    crashed.closedByUs = true;
    await crashed.page.close({ runBeforeUnload: false }).catch(() => {});
    if (!tab) return fresh;
    tabList = focusTab(tabList, tab.id) ?? tabList;
    tab.reopened = crashed.reopened + 1;
    const again = crashed.reopened === 0 && /^https?:/.test(url);
    if (again) await fresh.goto(url, { waitUntil: 'domcontentloaded' }).catch(() => {});
    note(
      again
        ? `the page in tab [${crashed.id}] crashed; it was opened again in tab [${tab.id}]`
        : `the page in tab [${crashed.id}] crashed again; tab [${tab.id}] is blank instead`,
    );
    return fresh;
  }

  async function newTab(ready: BrowserContext): Promise<Page> {
    opening++;
    try {
      return await ready.newPage();
    } finally {
      opening--;
    }
  }

  async function locate(ref: string): Promise<Locator> {
    if (!REF_PATTERN.test(ref))
      throw new ActionError(`${JSON.stringify(ref)} is not a ref (refs look like e12 or f1e3)`);
    const target = (await page()).locator(`aria-ref=${ref}`);
    // A ref of an earlier document throws ("Invalid frame"); one of a re-rendered element matches nothing.
    const count = await target.count().catch(() => 0);
    if (count === 0) throw new StaleRefError(ref);
    return target;
  }

  /** Waits until the requests started are done (or the time is up); how many are still running. */
  async function settle(requests: Set<Request>, until: number): Promise<number> {
    while (requests.size > 0 && Date.now() < until) await sleep(SETTLE_MS);
    return requests.size;
  }

  async function act(work: (page: Page) => Promise<unknown>): Promise<Acted> {
    const target = await page();
    const before = current();
    const from = { tab: before?.id, documents: before?.documents, url: target.url() };
    const watching = {
      requests: new Set<Request>(),
      seen: 0,
      newTabs: [] as number[],
      downloads: [] as Promise<unknown>[],
    };
    watch = watching;
    const until = Date.now() + config.actionTimeoutMs;
    try {
      const dialog = new Promise<'dialog'>((resolve) => {
        dialogOpened = () => resolve('dialog');
      });
      // An action whose page closes itself (a button calling window.close()) did what it was
      // asked, though Playwright may report the click as failed: the state then says the tab
      // closed. A browser that went away (a crash) is still a failure: the tool starts another.
      const running = work(target).catch((error: unknown) => {
        const pageClosedItself = target.isClosed() && target.context().browser()?.isConnected() === true;
        if (pageClosedItself && CLOSED.test(String(error))) return undefined;
        throw error;
      });
      const outcome = await Promise.race([running, dialog]);
      if (outcome === 'dialog' && openDialog) {
        // The action waits for the dialog to be answered; handle_dialog waits for it then.
        openDialog.blocked = running.catch(() => {});
        return { moved: false, pending: 0, dialogOpened: true };
      }
      await sleep(SETTLE_MS);
      const pending = await settle(watching.requests, until);
      const opened = watching.newTabs.at(-1);
      if (opened !== undefined && tabs.has(opened)) {
        tabList = focusTab(tabList, opened) ?? tabList;
        const tab = tabs.get(opened);
        note(`the action opened tab [${opened}] and switched to it`);
        await tab?.page.waitForLoadState('domcontentloaded', { timeout: config.actionTimeoutMs }).catch(() => {});
        await tab?.page.bringToFront().catch(() => {});
      }
      const now = current();
      const moved =
        now?.id !== from.tab || now?.documents !== from.documents || (now !== undefined && now.page.url() !== from.url);
      if (moved && now) {
        await now.page.waitForLoadState('load', { timeout: Math.max(0, until - Date.now()) }).catch(() => {});
      }
      // Downloads finish in their own time; a large one may take a while.
      await within(Promise.all(watching.downloads), config.navigationTimeoutMs);
      // What came back may still be on its way into the page.
      if (watching.seen > 0 && pending === 0) await sleep(SETTLE_MS);
      return { moved, pending, dialogOpened: false };
    } finally {
      watch = undefined;
      actionEnded = Date.now();
      dialogOpened = undefined;
    }
  }

  async function facts(tab: Tab, scroll?: ScrollPosition): Promise<PageFacts> {
    const listed = tabList.ids.flatMap((id) => {
      const other = tabs.get(id);
      return other ? [{ id, title: other.title, url: other.page.url() }] : [];
    });
    const closures = closedByPage.filter((closure) => closure.context === context && !contextLost);
    closedByPage = [];
    const taken = [...events, ...closures.map(({ id }) => `tab [${id}] was closed by the page`)];
    events = [];
    const errors = consoleErrors;
    consoleErrors = 0;
    return {
      url: tab.page.url(),
      title: tab.title,
      ...(tab.status !== undefined ? { status: tab.status } : {}),
      tabs: listed,
      currentTab: tab.id,
      ...(scroll ? { scroll } : {}),
      events: taken,
      consoleErrors: errors,
      ...(openDialog && openDialog.tab === tab.id
        ? { dialog: { type: openDialog.dialog.type(), message: openDialog.dialog.message() } }
        : {}),
    };
  }

  /** The elements, scroll position and title of the tab's page; once more after a load that got in the way. */
  async function look(tab: Tab): Promise<{ elements: PageElement[]; scroll: ScrollPosition }> {
    for (let attempt = 0; ; attempt++) {
      try {
        const [snapshot, scroll, title] = await Promise.all([
          // Reading a long page is no action on an element: it may take as long as a page load.
          tab.page.ariaSnapshotJSON({ mode: 'ai', boxes: true, timeout: config.navigationTimeoutMs }),
          tab.page.evaluate(readScroll),
          tab.page.title(),
        ]);
        tab.title = title;
        return { elements: pageElements(ariaNodes(snapshot), tab.page.url()), scroll };
      } catch (error) {
        if (attempt > 0 || !/context was destroyed|navigat/i.test(String(error))) throw error;
        await tab.page.waitForLoadState('domcontentloaded').catch(() => {});
      }
    }
  }

  /** The state as the model reads it: marked as the page's words, and never longer than the cap allows. */
  async function render(acted: Acted | undefined): Promise<string> {
    const state = await unmarked(acted);
    return pageContent(clip(state, config.maxStateChars + MAX_HEAD_CHARS));
  }

  async function unmarked(acted: Acted | undefined): Promise<string> {
    await page();
    const tab = current();
    if (!tab) throw new ActionError('no tab is open');
    if (openDialog && openDialog.tab === tab.id) {
      return `${describePage(await facts(tab))}\nElements: hidden while the dialog is open (the page waits for it)`;
    }
    const seen = await look(tab);
    const before = baseline;
    baseline = { tab: tab.id, documents: tab.documents, url: tab.page.url(), elements: seen.elements };
    const pending =
      acted && acted.pending > 0
        ? `\n[${acted.pending} request${acted.pending === 1 ? '' : 's'} the action started still running: wait, or get_current_state later]`
        : '';
    const sameDocument =
      before !== undefined &&
      before.tab === tab.id &&
      before.documents === tab.documents &&
      before.url === tab.page.url();
    if (acted && !acted.moved && sameDocument) {
      const brief = describePage({ ...(await facts(tab)), tabs: [] });
      return `${brief}\n${describeChanges(diffElements(before.elements, seen.elements), config.maxStateChars)}${pending}`;
    }
    const full = `${describePage(await facts(tab, seen.scroll))}\n${compactElements(seen.elements, {
      viewportHeight: seen.scroll.viewportHeight || config.viewport.height,
      maxChars: config.maxStateChars,
    })}`;
    return full + pending;
  }

  async function capture(options: { readonly fullPage?: boolean } = {}): Promise<ImageData> {
    const target = await page();
    const bytes = await target.screenshot({ type: 'jpeg', quality: 65, fullPage: options.fullPage === true });
    return { base64: bytes.toString('base64'), mimeType: 'image/jpeg' };
  }

  const session: Session = {
    config,
    lock,
    page,
    locate,
    act,
    report: (acted) => render(acted),
    fullState: () => render(undefined),
    capture,
    state: () => lock.run(() => render(undefined)),
    screenshot: (options) => lock.run(() => capture(options)),
    async openTab(url) {
      const created = await newTab(await ensureContext());
      const tab = [...tabs.values()].find((candidate) => candidate.page === created);
      if (tab) tabList = focusTab(tabList, tab.id) ?? tabList;
      return act((target) => target.goto(url, { waitUntil: 'domcontentloaded' }));
    },
    switchTab(id) {
      const next = focusTab(tabList, id);
      if (!next) throw new ActionError(`there is no tab ${id}; the open tabs are ${tabList.ids.join(', ') || 'none'}`);
      tabList = next;
      void tabs
        .get(id)
        ?.page.bringToFront()
        .catch(() => {});
      return { moved: true, pending: 0, dialogOpened: false };
    },
    async closeTab(id) {
      const which = id ?? tabList.current;
      const tab = which === undefined ? undefined : tabs.get(which);
      if (!tab)
        throw new ActionError(`there is no tab ${which}; the open tabs are ${tabList.ids.join(', ') || 'none'}`);
      tab.closedByUs = true;
      await tab.page.close({ runBeforeUnload: false });
      return { moved: true, pending: 0, dialogOpened: false };
    },
    currentTabId: () => tabList.current,
    dialog: {
      open: () => (openDialog ? { type: openDialog.dialog.type(), message: openDialog.dialog.message() } : undefined),
      async answer(accept, promptText) {
        const open = openDialog;
        if (!open) throw new ActionError('no dialog is open');
        openDialog = undefined;
        await (accept ? open.dialog.accept(promptText) : open.dialog.dismiss());
        note(
          `${open.dialog.type()} ${JSON.stringify(open.dialog.message().slice(0, 300))} was ${accept ? 'accepted' : 'dismissed'}`,
        );
        return act(async () => open.blocked);
      },
    },
    refusalFor: (url) => refusals?.refusalFor(url),
    async lost() {
      const gone = () => contextLost || context?.browser()?.isConnected() === false;
      // The news of a crash can come a moment after the error it caused.
      for (let i = 0; i < 10 && !gone(); i++) await sleep(20);
      if (gone()) contextLost = true;
      return contextLost;
    },
    note,
    describe: (ref) => {
      const line = baseline?.elements.find((element) => element.ref === ref)?.line;
      // The element as named, without its value or options.
      return line ? line.slice(0, line.indexOf(`[ref=${ref}]`) + ref.length + 6) : `[ref=${ref}]`;
    },
    async close() {
      if (closed) return;
      closed = true;
      const ending = context;
      context = undefined;
      await ending?.close().catch(() => {});
      await proxy?.close();
      await config.lease.release();
    },
  };
  return session;
}
