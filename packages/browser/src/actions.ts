import type { ToolOutput, ToolScope } from '@openmanus/core';
import { addressRefusal } from '@openmanus/tools';
import type { Locator, Page, Response } from 'playwright-core';
import type { ActionArgs, ActionName } from './actionSchema.js';
import { extractContent } from './extract.js';
import { firstLine } from './launch.js';
import { REFUSAL_HEADER } from './networkGuard.js';
import { type Acted, ActionError, type Session } from './session.js';
import type { BrowserSearch } from './settings.js';
import { shown } from './shown.js';
import { findInSnapshot } from './snapshot/find.js';
import { readUpload } from './upload.js';

/** What every action gets besides its arguments. */
export interface ActionContext {
  readonly session: Session;
  readonly scope: ToolScope;
  readonly search: BrowserSearch;
  /** extract_content's chunk size. */
  readonly maxContentLength: number;
}

type Handler<A extends ActionName> = (args: ActionArgs<A>, context: ActionContext) => Promise<string | ToolOutput>;

const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
const MAX_WAIT_SECONDS = 30;

/** The URL the model asked for, if the browser may open it: http(s) only (no file:, javascript:, chrome:). */
async function allowedUrl(text: string, session: Session): Promise<string> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ActionError(`${JSON.stringify(text)} is not an absolute URL (e.g. https://example.com/)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ActionError(`only http:// and https:// URLs can be opened, not ${url.protocol} (${url.href})`);
  }
  // Checked here for a clear answer; the network guard checks every request again.
  if (session.config.guard !== 'none') {
    const refused = await addressRefusal(url, session.config.network, session.config.resolve);
    if (refused) throw new ActionError(`${url.href} was not opened: ${refused.message}`);
  }
  return url.href;
}

/** Opens `url` in the page; a refusal by the network policy, on a redirect too, is an error that says so. */
async function navigate(page: Page, url: string, session: Session): Promise<void> {
  let response: Response | null;
  try {
    response = await page.goto(url, { waitUntil: 'domcontentloaded' });
  } catch (error) {
    const refused = session.refusalFor(url);
    if (refused) throw new ActionError(`${url} was not opened: ${refused}`);
    // A download ends the navigation this way; its event says where the file went.
    if (/net::ERR_ABORTED|Download is starting/.test(String(error))) return;
    throw new ActionError(`could not open ${url}: ${firstLine(error)}`);
  }
  if (response?.headers()[REFUSAL_HEADER] === undefined) return;
  // Only the guard's own record counts: a site can send the header too (through a proxy of yours,
  // or a browser reached by cdp_url), and what it wrote is not read.
  const landed = page.url();
  const why = session.refusalFor(landed);
  if (why === undefined) return;
  throw new ActionError(
    landed === url
      ? `${url} was not opened: ${why}`
      : `${url} redirected to ${shown(landed, 300)}, which was not opened: ${why}`,
  );
}

/** A click that an overlay took: which element covers the target, and what to do. */
function coveredBy(error: unknown): string | undefined {
  const cover = /(<[^\n]*?>(?:…<\/\w+>)?)(?: from <[^\n]*?> subtree)? intercepts pointer events/.exec(
    String(error),
  )?.[1];
  return cover;
}

async function click(target: Locator, ref: string, double: boolean, session: Session): Promise<Acted> {
  try {
    return await session.act(() => (double ? target.dblclick() : target.click()));
  } catch (error) {
    const cover = coveredBy(error);
    if (!cover) throw error;
    throw new ActionError(
      `${session.describe(ref)} is covered by ${cover}, which takes the click: an overlay, a cookie banner or a ` +
        'dialog. Close or accept it first (look for its button in the state below), or send_keys Escape.',
    );
  }
}

/** Once a newer page state is in memory, an action's result shrinks to what it did (core's `keepFullObservations`). */
const STATE_LEFT_OUT =
  '[the page state after this action is left out: the current one follows while the browser is in use]';

/**
 * What the action did, then the page state; its brief is what it did and the page it left the tab
 * on (so that the page can be opened again) without the state.
 */
export const stateOutput = (outcome: string, state: string, isError = false, url?: string): ToolOutput => ({
  output: `${outcome}\n\n${state}`,
  brief: `${outcome}${url ? `\nThe tab was then on ${shown(url, MAX_BRIEF_URL)}.` : ''}\n${STATE_LEFT_OUT}`,
  ...(isError ? { isError } : {}),
});

/** Longest URL a brief quotes (a page can make its own URL a megabyte long). */
const MAX_BRIEF_URL = 300;

/** The current tab's URL, if there is a tab to ask. */
async function currentUrl(session: Session): Promise<string | undefined> {
  try {
    return (await session.page()).url();
  } catch {
    return undefined;
  }
}

const withState = async (outcome: string, session: Session, acted: Acted) =>
  stateOutput(outcome, await session.report(acted), false, await currentUrl(session));

/** The options of a native <select>, or undefined for another kind of dropdown. */
const nativeOptions = (target: Locator) =>
  target.evaluate((element) => {
    const select = element as unknown as {
      tagName: string;
      options?: ArrayLike<{ text: string; value: string; selected: boolean }>;
    };
    if (select.tagName !== 'SELECT' || !select.options) return undefined;
    return Array.from(select.options, (option) => ({
      text: option.text,
      value: option.value,
      selected: option.selected,
    }));
  });

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

async function scroll(direction: 1 | -1, args: ActionArgs<'scroll_down' | 'scroll_up'>, { session }: ActionContext) {
  const page = await session.page();
  const amount = args.scroll_amount ?? page.viewportSize()?.height ?? session.config.viewport.height;
  const by = direction * amount;
  if (args.ref) {
    await (await session.locate(args.ref)).evaluate(
      (element, dy) =>
        (element as unknown as { scrollBy(options: object): void }).scrollBy({ top: dy, behavior: 'instant' }),
      by,
    );
  } else {
    await page.evaluate(
      (dy) => (globalThis as unknown as { scrollBy(options: object): void }).scrollBy({ top: dy, behavior: 'instant' }),
      by,
    );
  }
  const what = args.ref ? ` in ${session.describe(args.ref)}` : '';
  return stateOutput(
    `Scrolled ${direction > 0 ? 'down' : 'up'} by ${amount} pixels${what}.`,
    await session.fullState(),
    false,
    await currentUrl(session),
  );
}

/** Every action of browser_use. */
export const ACTIONS: { readonly [A in ActionName]: Handler<A> } = {
  async go_to_url({ url }, { session }) {
    const target = await allowedUrl(url, session);
    const acted = await session.act((page) => navigate(page, target, session));
    return withState(`Navigated to ${target}.`, session, acted);
  },

  async click_element({ ref, double }, { session }) {
    const target = await session.locate(ref);
    const acted = await click(target, ref, double === true, session);
    return withState(`Clicked ${session.describe(ref)}.`, session, acted);
  },

  async input_text({ ref, text, submit, slowly }, { session }) {
    const target = await session.locate(ref);
    const acted = await session.act(async () => {
      if (slowly) {
        await target.fill('');
        await target.pressSequentially(text, { delay: 20 });
      } else await target.fill(text);
      if (submit) await target.press('Enter');
    });
    return withState(
      `Typed ${JSON.stringify(text)} into ${session.describe(ref)}${submit ? ' and pressed Enter' : ''}.`,
      session,
      acted,
    );
  },

  scroll_down: (args, context) => scroll(1, args, context),
  scroll_up: (args, context) => scroll(-1, args, context),

  async scroll_to_text({ text }, { session }) {
    const match = (await session.page()).getByText(text).first();
    if ((await match.count()) === 0) throw new ActionError(`there is no text ${JSON.stringify(text)} on the page`);
    await match.scrollIntoViewIfNeeded();
    const state = await session.fullState();
    return stateOutput(`Scrolled to text: ${JSON.stringify(text)}.`, state, false, await currentUrl(session));
  },

  async send_keys({ keys }, { session }) {
    const page = await session.page();
    const presses = keys.split(/\s+/).filter(Boolean);
    const acted = await session.act(async () => {
      for (const key of presses) await page.keyboard.press(key);
    });
    return withState(`Sent keys: ${presses.join(' ')}.`, session, acted);
  },

  async get_dropdown_options({ ref }, { session }) {
    const target = await session.locate(ref);
    const options = await nativeOptions(target);
    if (options) {
      const lines = options.map(
        (option, i) =>
          `${i}: ${JSON.stringify(option.text)}${option.value !== option.text ? ` (value ${JSON.stringify(option.value)})` : ''}${option.selected ? ' [selected]' : ''}`,
      );
      return `Options of ${session.describe(ref)} (select one with select_dropdown_option and its text):\n${lines.join('\n')}`;
    }
    // A dropdown of the page's own making: open it and show what appeared.
    const acted = await click(target, ref, false, session);
    return withState(`Opened ${session.describe(ref)}; its options are among the new elements.`, session, acted);
  },

  async select_dropdown_option({ ref, text }, { session }) {
    const target = await session.locate(ref);
    const options = await nativeOptions(target);
    if (options) {
      const option = options.find((o) => o.text.trim() === text.trim()) ?? options.find((o) => o.value === text);
      if (!option) {
        const names = options.map((o) => JSON.stringify(o.text)).join(', ');
        throw new ActionError(`${session.describe(ref)} has no option ${JSON.stringify(text)}; its options: ${names}`);
      }
      const acted = await session.act(() => target.selectOption({ value: option.value }));
      return withState(`Selected option ${JSON.stringify(option.text)} in ${session.describe(ref)}.`, session, acted);
    }
    const page = await session.page();
    const acted = await session.act(async () => {
      if ((await page.getByRole('option', { name: text, exact: true }).count()) === 0) await target.click();
      const option = page.getByRole('option', { name: text, exact: true }).first();
      if ((await option.count()) === 0) {
        throw new ActionError(`${session.describe(ref)} shows no option named ${JSON.stringify(text)} once opened`);
      }
      await option.click();
    });
    return withState(`Selected option ${JSON.stringify(text)} in ${session.describe(ref)}.`, session, acted);
  },

  async go_back(_args, { session }) {
    let went = true;
    const acted = await session.act(async (page) => {
      went = (await page.goBack({ waitUntil: 'domcontentloaded' })) !== null;
    });
    if (!went) throw new ActionError('there is no earlier page in this tab to go back to');
    return withState('Navigated back.', session, acted);
  },

  async refresh(_args, { session }) {
    const acted = await session.act((page) => page.reload({ waitUntil: 'domcontentloaded' }));
    return withState('Reloaded the page.', session, acted);
  },

  async web_search({ query }, { session, search, scope }) {
    const found = await search(query, { signal: scope.signal });
    if (!found.isOk())
      throw new ActionError(`the search for ${JSON.stringify(query)} gave no results: ${found.error.message}`);
    const { results, engine } = found.value;
    const first = results[0];
    if (!first) throw new ActionError(`the search for ${JSON.stringify(query)} gave no results`);
    const list = results.map((result, i) => `${i + 1}. ${result.title} — ${result.url}`).join('\n');
    const target = await allowedUrl(first.url, session);
    const acted = await session.act((page) => navigate(page, target, session));
    return withState(
      `Searched for ${JSON.stringify(query)} (${engine}):\n${list}\nOpened the first result, ${target}.`,
      session,
      acted,
    );
  },

  async wait({ seconds, text, text_gone }, { session, scope }) {
    const page = await session.page();
    const limit = Math.min(seconds ?? (text || text_gone ? 10 : 3), MAX_WAIT_SECONDS);
    const acted = await session.act(async () => {
      if (!text && !text_gone) return sleep(limit * 1000, scope.signal);
      const [what, state] = text ? [text, 'visible' as const] : [text_gone ?? '', 'hidden' as const];
      try {
        await page
          .getByText(what)
          .first()
          .waitFor({ state, timeout: limit * 1000 });
      } catch {
        throw new ActionError(
          `${JSON.stringify(what)} did not ${state === 'visible' ? 'appear' : 'disappear'} within ${limit} s`,
        );
      }
    });
    const waited = text
      ? `Waited for ${JSON.stringify(text)} to appear.`
      : text_gone
        ? `Waited for ${JSON.stringify(text_gone)} to disappear.`
        : `Waited for ${limit} seconds.`;
    return withState(waited, session, acted);
  },

  async extract_content({ goal, start_from_char }, { session, scope, maxContentLength }) {
    const extracted = await extractContent(await session.page(), goal, start_from_char ?? 0, maxContentLength, scope);
    if (!extracted.isOk()) throw new ActionError(extracted.error);
    return extracted.value;
  },

  async switch_tab({ tab_id }, { session }) {
    const acted = session.switchTab(tab_id);
    return withState(`Switched to tab [${tab_id}].`, session, acted);
  },

  async open_tab({ url }, { session }) {
    const target = await allowedUrl(url, session);
    const acted = await session.openTab(target);
    return withState(`Opened tab [${session.currentTabId()}] with ${target}.`, session, acted);
  },

  async close_tab({ tab_id }, { session }) {
    const closing = tab_id ?? session.currentTabId();
    const acted = await session.closeTab(tab_id);
    return withState(`Closed tab [${closing}].`, session, acted);
  },

  get_current_state: async (_args, { session }) => ({
    output: await session.fullState(),
    brief: `Read the page state.\n${STATE_LEFT_OUT}`,
  }),

  async find({ text, regex }, { session }) {
    const snapshot = await (await session.page()).ariaSnapshot({
      mode: 'ai',
      timeout: session.config.navigationTimeoutMs,
    });
    return findInSnapshot(snapshot, { text, ...(regex !== undefined ? { regex } : {}) });
  },

  async hover({ ref }, { session }) {
    const target = await session.locate(ref);
    const acted = await session.act(() => target.hover());
    return withState(`Hovered over ${session.describe(ref)}.`, session, acted);
  },

  async handle_dialog({ accept, prompt_text }, { session }) {
    const open = session.dialog.open();
    if (!open) {
      const how =
        session.config.dialogs === 'ask' ? '' : ' (dialogs are answered automatically here; the Events line says how)';
      throw new ActionError(`no dialog is open${how}`);
    }
    const acted = await session.dialog.answer(accept, prompt_text);
    return withState(`${accept ? 'Accepted' : 'Dismissed'} the ${open.type} dialog.`, session, acted);
  },

  async upload_file({ ref, path }, { session }) {
    const target = await session.locate(ref);
    const file = await readUpload(session.config.workspace, path, MAX_UPLOAD_BYTES);
    const acted = await session.act(() => target.setInputFiles(file));
    return withState(`Uploaded ${path} (${file.buffer.length} bytes) with ${session.describe(ref)}.`, session, acted);
  },

  async screenshot({ full_page, ref }, { session }) {
    if (ref) {
      const bytes = await (await session.locate(ref)).screenshot({ type: 'jpeg', quality: 65 });
      return {
        output: `Screenshot of ${session.describe(ref)}.`,
        image: { base64: bytes.toString('base64'), mimeType: 'image/jpeg' },
      };
    }
    const image = await session.capture({ fullPage: full_page === true });
    return {
      output: `Screenshot of ${full_page ? 'the whole page' : 'the viewport'} of ${(await session.page()).url()}.`,
      image,
    };
  },
};
