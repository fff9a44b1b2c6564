import { resolve } from 'node:path';
import {
  defineTool,
  err,
  type RunScope,
  type Tool,
  type ToolOutput,
  type ToolReturn,
  type ToolScope,
} from '@openmanus/core';
import { networkPolicy, searchWeb } from '@openmanus/tools';
import { type ActionName, type BrowserAction, browserUseParameters, parseAction } from './actionSchema.js';
import { ACTIONS, type ActionContext, stateOutput } from './actions.js';
import { createBrowserHost } from './host.js';
import { BrowserUnavailableError, firstLine, launchBrowser } from './launch.js';
import { PAGE_CONTENT_NOTE } from './pageContent.js';
import { ActionError, type BrowserSession, CLOSED, createSession, type Session, StaleRefError } from './session.js';
import type { BrowserSearch, BrowserUseOptions } from './settings.js';
import { UploadRefusedError } from './upload.js';

/** browser_use, and the run's browser session for hosts (a context provider feeding the page to the model). */
export interface BrowserUseTool extends Tool<BrowserAction> {
  /** The run's session: opened (not yet launched) if the run has none, closed when the run ends. */
  session(scope: RunScope): Promise<BrowserSession>;
}

const DESCRIPTION = `Control a web browser to research and act on web pages.
Each result ends with the page state: URL, title, HTTP status, tabs ([id], * = current), scroll position, events (new tabs, downloads, dialogs, console errors), and the links, buttons, fields and headings near the viewport, each with a ref such as [ref=e12] (f1e3 inside a frame). Act on an element by its ref. After an action that does not load a page, only what changed is listed (* new, ~ changed).
Actions and their parameters:
- go_to_url(url), go_back, refresh, web_search(query): search the web and open the first result
- click_element(ref, double?), input_text(ref, text, submit?, slowly?), hover(ref), send_keys(keys), upload_file(ref, path)
- get_dropdown_options(ref), select_dropdown_option(ref, text)
- scroll_down / scroll_up(scroll_amount? in pixels, ref? of a scrollable element), scroll_to_text(text)
- find(text, regex?): the lines of the whole page that match, with refs (free; use it before scrolling through long pages)
- extract_content(goal, start_from_char?): read the page's main content and extract what the goal asks (a model call)
- open_tab(url), switch_tab(tab_id), close_tab(tab_id?)
- wait(seconds? | text | text_gone), handle_dialog(accept, prompt_text?), screenshot(full_page?, ref?), get_current_state
${PAGE_CONTENT_NOTE}`;

/** Actions that work while a dialog blocks the page. */
const WHILE_DIALOG = new Set<ActionName>(['handle_dialog', 'get_current_state']);

let instances = 0;

/** The search for web_search: the one given, else @openmanus/tools' searchWeb with the given options (awaited: TypeScript does not take a ResultAsync for a PromiseLike of a wider error). */
const searchOf = (search: BrowserUseOptions['search']): BrowserSearch =>
  typeof search === 'function' ? search : async (query, { signal }) => searchWeb(query, { ...search, signal });

/**
 * OpenManus's browser_use tool on playwright-core and a system Chrome or Chromium: every action of
 * OpenManus, with element refs that stay valid instead of shifting indices, a compact page state
 * instead of screenshots, and a network policy the pages cannot get around. Each run gets its own
 * browser context, opened on its first call and closed when it ends; the browser is started on
 * first use and closed when no run uses it. Option mistakes throw here.
 */
export function createBrowserUse(options: BrowserUseOptions = {}): BrowserUseTool {
  const network = networkPolicy(options, 'browser_use');
  const remote = options.wssUrl !== undefined || options.cdpUrl !== undefined;
  // Our proxy on 127.0.0.1 checks each connection; a browser reached over the network, or one behind a
  // proxy of yours, gets URL checks instead.
  const guard = network.allowPrivateNetwork ? 'none' : remote || options.proxy ? 'route' : 'proxy';
  const host = createBrowserHost(
    () =>
      launchBrowser({
        headless: options.headless ?? true,
        disableSecurity: options.disableSecurity ?? false,
        extraArgs: options.extraChromiumArgs ?? [],
        ...(options.chromeInstancePath ? { executablePath: options.chromeInstancePath } : {}),
        ...(options.wssUrl ? { wssUrl: options.wssUrl } : {}),
        ...(options.cdpUrl ? { cdpUrl: options.cdpUrl } : {}),
      }),
    options.browser,
  );
  const configuredWorkspace = options.workspace === undefined ? undefined : resolve(options.workspace);
  const search = searchOf(options.search);
  const key = `browser_use:${++instances}`;

  const open = (scope: RunScope): Promise<Session> =>
    scope.resource(
      key,
      () =>
        createSession({
          lease: host.lease(),
          workspace: configuredWorkspace ?? resolve(scope.workspace ?? 'workspace'),
          guard,
          network,
          ...(options.resolve ? { resolve: options.resolve } : {}),
          ...(options.proxy ? { proxy: options.proxy } : {}),
          disableSecurity: options.disableSecurity ?? false,
          viewport: options.viewport ?? { width: 1280, height: 800 },
          actionTimeoutMs: options.actionTimeoutMs ?? 5000,
          navigationTimeoutMs: options.navigationTimeoutMs ?? 30_000,
          dialogs: options.dialogs ?? 'accept',
          maxStateChars: options.maxStateChars ?? 4000,
          maxDownloadBytes: options.maxDownloadBytes ?? 100 * 1024 * 1024,
          maxDownloads: options.maxDownloads ?? 20,
          ...(options.onContext ? { onContext: options.onContext } : {}),
        }),
      (session) => session.close(),
    );

  const perform = async (args: BrowserAction, session: Session, scope: ToolScope): Promise<ToolReturn> => {
    const state = () =>
      session.fullState().catch((error: unknown) => `(the page state could not be read: ${firstLine(error)})`);
    const dialog = session.dialog.open();
    if (dialog && !WHILE_DIALOG.has(args.action)) {
      return stateOutput(
        `A ${dialog.type} dialog is open and blocks the page: call handle_dialog first.`,
        await state(),
        true,
      );
    }
    const context: ActionContext = {
      session,
      scope,
      search,
      maxContentLength: options.maxContentLength ?? 30_000,
    };
    const act = ACTIONS[args.action] as (args: BrowserAction, context: ActionContext) => Promise<string | ToolOutput>;
    try {
      const result = await act(args, context).catch(async (error: unknown) => {
        // The browser was gone before the action could do anything: do it in a new one.
        if (CLOSED.test(String(error)) && (await session.lost())) return act(args, context);
        throw error;
      });
      const output = typeof result === 'string' ? { output: result } : result;
      if (!options.vision || output.image) return output;
      return { ...output, image: await session.capture() };
    } catch (error) {
      if (error instanceof StaleRefError) {
        return stateOutput(
          `ref ${error.ref} is not on the page any more (it changed since the state you saw): use a ref from this state.`,
          await state(),
          true,
        );
      }
      if (error instanceof BrowserUnavailableError) return err(error.message);
      if (error instanceof UploadRefusedError) return err(`upload_file: ${error.message}`);
      const message = error instanceof ActionError ? error.message : `failed: ${firstLine(error)}`;
      return stateOutput(`${args.action}: ${message}`, await state(), true);
    }
  };

  const tool = defineTool<BrowserAction>({
    name: 'browser_use',
    description: DESCRIPTION,
    parameters: browserUseParameters,
    validate: parseAction,
    // A page load, the waits after it and a download, or a search and then a page.
    timeoutMs: (options.navigationTimeoutMs ?? 30_000) * 3 + 30_000,
    execute: async (args, scope) => {
      const session = await open(scope);
      return session.lock.run(() => perform(args, session, scope));
    },
  });
  return { ...tool, session: open };
}
