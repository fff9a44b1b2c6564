// sandbox_browser: each action a request made with curl from inside the run's sandbox (a local one
// here, so curl reaches 127.0.0.1) to the browser automation service of OpenManus's sandbox image —
// here a stand-in of it driving a real Chromium.
import { existsSync } from 'node:fs';
import {
  createLocalSandboxProvider,
  createOpenAiLlm,
  err,
  type Result,
  run,
  type SandboxProvider,
  type ToolOutput,
  type ToolReturn,
} from '@openmanus/core';
import { startOpenAiServer } from '@openmanus/core/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDaytonaSandboxProvider } from '../../sandbox/src/daytonaProvider.js';
import { DEFAULT_DAYTONA_SETTINGS } from '../../sandbox/src/daytonaSettings.js';
import { startDaytonaStandIn } from '../../sandbox/test/daytonaStandIn.js';
import { createSandboxManus } from '../src/agents/sandboxManus.js';
import { createSandboxBrowser } from '../src/sandbox/sandboxBrowser.js';
import { startBrowserService } from './browserServiceStandIn.js';
import { launchChromium } from './chromium.js';
import { directRun, tempWorkspace } from './helpers.js';
import { startWebServer, type WebServer } from './webServer.js';

let chromium: Browser;
let service: Awaited<ReturnType<typeof startBrowserService>>;
let site: WebServer;
let provider: SandboxProvider;
let workspace: string;

const pages: Record<string, string> = {
  '/': `<title>Trip planner</title><form action="/result"><input name="q"><button>Search</button></form>`,
};

beforeAll(async () => {
  chromium = await launchChromium();
  service = await startBrowserService(chromium);
  site = await startWebServer(({ path, query }, res) => {
    const html = pages[path] ?? `<title>Result for ${query.get('q')}</title><p>Sights in ${query.get('q')}</p>`;
    res.writeHead(200, { 'content-type': 'text/html' }).end(html);
  });
  workspace = await tempWorkspace();
  // No bubblewrap: curl in the sandbox reaches the stand-in on the host's 127.0.0.1.
  provider = createLocalSandboxProvider({ workspace, isolation: 'none' });
}, 30_000);
afterAll(async () => {
  await service?.close();
  await site?.close();
  await chromium?.close();
});

const browserTool = (apiUrl = service.apiUrl) =>
  directRun(createSandboxBrowser({ sandboxProvider: provider, apiUrl }), workspace);
const stateOf = (result: ToolReturn) => JSON.parse((result as ToolOutput).output) as Record<string, unknown>;

describe('sandbox_browser', () => {
  it('navigates, types and clicks by index; each answer is the page’s state with its screenshot attached', async () => {
    const browser = browserTool();
    const opened = (await browser.call({ action: 'navigate_to', url: `${site.url}/` })) as ToolOutput;
    expect(stateOf(opened)).toEqual({
      success: true,
      message: `Navigated to ${site.url}/`,
      url: `${site.url}/`,
      title: 'Trip planner',
      element_count: 2,
      pixels_below: 0,
    });
    expect(opened.image?.mimeType).toBe('image/jpeg');
    expect(opened.isError).toBeUndefined();

    await browser.call({ action: 'input_text', index: 0, text: 'Kyoto' });
    const clicked = await browser.call({ action: 'click_element', index: 1 });
    expect(stateOf(clicked)).toMatchObject({ url: `${site.url}/result?q=Kyoto`, title: 'Result for Kyoto' });
    expect(service.requests.slice(-3)).toEqual([
      { action: 'navigate_to', params: { url: `${site.url}/` } },
      { action: 'input_text', params: { index: 0, text: 'Kyoto' } },
      { action: 'click_element', params: { index: 1 } },
    ]);
    // wait is three seconds unless told.
    await browser.call({ action: 'wait' });
    expect(service.requests.at(-1)).toEqual({ action: 'wait', params: { seconds: 3 } });
    await browser.close();
  });

  it('text the model types reaches the page as it is: quotes and $( ) never meet a shell', async () => {
    // OpenManus pasted the JSON into a shell command in single quotes: this text broke out of them.
    const marker = `${workspace}/pwned`;
    const text = `it's '$(touch ${marker})' "quoted" \`touch ${marker}\``;
    const browser = browserTool();
    await browser.call({ action: 'navigate_to', url: `${site.url}/` });
    const typed = await browser.call({ action: 'input_text', index: 0, text });
    expect(stateOf(typed)).toMatchObject({ success: true });
    expect(service.requests.at(-1)).toEqual({ action: 'input_text', params: { index: 0, text } });
    await browser.call({ action: 'click_element', index: 1 });
    expect(new URL(String(stateOf(await browser.call({ action: 'wait', seconds: 0 })).url)).searchParams.get('q')).toBe(
      text,
    );
    expect(existsSync(marker)).toBe(false);
    await browser.close();
  });

  it('every action sends OpenManus’s parameters for it, and only those', async () => {
    const browser = browserTool();
    const sent = async (args: Record<string, unknown>) => {
      await browser.call(args);
      return service.requests.at(-1);
    };
    // Every parameter given to every action: each must send only its own.
    const everything = {
      url: 'about:blank',
      index: 2,
      text: 'Kyoto',
      amount: 300,
      page_id: 1,
      keys: 'Enter',
      seconds: 1,
      x: 10,
      y: 20,
      element_source: '#a',
      element_target: '#b',
    };
    const expected: Record<string, Record<string, unknown>> = {
      navigate_to: { url: 'about:blank' },
      go_back: {},
      wait: { seconds: 1 },
      click_element: { index: 2 },
      input_text: { index: 2, text: 'Kyoto' },
      send_keys: { keys: 'Enter' },
      switch_tab: { page_id: 1 },
      close_tab: { page_id: 1 },
      scroll_down: { amount: 300 },
      scroll_up: { amount: 300 },
      scroll_to_text: { text: 'Kyoto' },
      get_dropdown_options: { index: 2 },
      select_dropdown_option: { index: 2, text: 'Kyoto' },
      click_coordinates: { x: 10, y: 20 },
      drag_drop: { element_source: '#a', element_target: '#b' },
    };
    for (const [action, params] of Object.entries(expected))
      expect(await sent({ action, ...everything }), action).toEqual({ action, params });
    // Scrolling without an amount leaves it to the service (a page).
    expect(await sent({ action: 'scroll_down' })).toEqual({ action: 'scroll_down', params: {} });
    await browser.close();
  });

  it('an action missing what it needs is refused before anything is sent', async () => {
    const browser = browserTool();
    const before = service.requests.length;
    expect(await browser.call({ action: 'navigate_to' })).toEqual(err('navigate_to needs url.'));
    expect(await browser.call({ action: 'input_text', text: 'x' })).toEqual(err('input_text needs index.'));
    expect(await browser.call({ action: 'click_coordinates' })).toEqual(err('click_coordinates needs x and y.'));
    expect(service.requests.length).toBe(before);
    await browser.close();
  });

  it('an action the service could not do is an error, with what the service said', async () => {
    const browser = browserTool();
    const failed = (await browser.call({ action: 'scroll_to_text', text: 'nowhere' })) as ToolOutput;
    expect(failed.isError).toBe(true);
    expect(stateOf(failed)).toEqual({ success: false, message: 'Unknown action: scroll_to_text' });
    await browser.close();
  });

  it('a service that answers too much, or too late, is named as such', async () => {
    const huge = await startWebServer((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"message":"${'x'.repeat(17 * 2 ** 20)}"}`);
    });
    const silent = await startWebServer(() => {});
    try {
      const flooded = directRun(createSandboxBrowser({ sandboxProvider: provider, apiUrl: huge.url }), workspace);
      expect(await flooded.call({ action: 'go_back' })).toEqual(
        err("The sandbox's browser service answered more than 16 MiB; nothing of it was used."),
      );
      const slow = directRun(
        createSandboxBrowser({ sandboxProvider: provider, apiUrl: silent.url, timeoutMs: 500 }),
        workspace,
      );
      expect(await slow.call({ action: 'go_back' })).toEqual(
        err('The browser action go_back took longer than 500 ms and was stopped.'),
      );
      await flooded.close();
      await slow.close();
    } finally {
      await huge.close();
      await silent.close();
    }
  });

  it('answers as services vary them: no message, a data: URL, a screenshot that is no image or no base64', async () => {
    const png = (
      await chromium.newPage().then(async (page) => {
        const shot = await page.screenshot();
        await page.close();
        return shot;
      })
    ).toString('base64');
    const answers: unknown[] = [
      { success: true },
      { success: true, screenshot_base64: `data:image/png;base64,${png}` },
      { success: true, screenshot_base64: 'aGVsbG8=' },
      { success: true, screenshot_base64: 'not base64!' },
      { success: true, screenshot_base64: 42 },
      [],
      null,
    ];
    const odd = await startWebServer((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers.shift()));
    });
    try {
      // Trailing slashes on the address are too many for the path.
      const browser = directRun(createSandboxBrowser({ sandboxProvider: provider, apiUrl: `${odd.url}//` }), workspace);
      const call = () => browser.call({ action: 'go_back' });
      expect(await call()).toEqual({
        output: JSON.stringify({ success: true, message: 'Browser action completed' }, null, 2),
      });
      expect(odd.requests.at(-1)?.path).toBe('/api/automation/go_back');
      const withDataUrl = (await call()) as ToolOutput;
      expect(withDataUrl.image?.mimeType).toBe('image/jpeg');
      expect(stateOf(await call())).toMatchObject({
        image_validation_error: expect.stringMatching(/^the screenshot: /),
      });
      expect(stateOf(await call())).toMatchObject({ image_validation_error: 'the screenshot is not base64' });
      const numbered = (await call()) as ToolOutput;
      expect(numbered.image).toBeUndefined();
      expect(stateOf(numbered)).toEqual({ success: true, message: 'Browser action completed' });
      for (const body of ['[]', 'null'])
        expect(await call()).toEqual(
          err(`The sandbox's browser service answered something other than a JSON object: ${body}`),
        );
      await browser.close();
    } finally {
      await odd.close();
    }
  });

  it('by default the service is looked for where OpenManus’s image serves it; an empty parameter is a missing one', async () => {
    const browser = directRun(createSandboxBrowser({ sandboxProvider: provider }), workspace);
    const result = (await browser.call({ action: 'go_back' })) as Result<never, string>;
    expect(result.isErr() && result.error).toMatch(
      /^The sandbox's browser service at http:\/\/localhost:8003 did not answer/,
    );
    expect(await browser.call({ action: 'navigate_to', url: '' })).toEqual(err('navigate_to needs url.'));
    await browser.close();
    // A run with no sandbox of its own, and none given to the tool.
    const unsandboxed = directRun(createSandboxBrowser(), workspace);
    expect(await unsandboxed.call({ action: 'go_back' })).toEqual(
      err('sandbox_browser drives the browser in the run’s sandbox, and this run has none.'),
    );
    await unsandboxed.close();
  });

  it('a sandbox without the service: the error names where it was looked for and the image that has it', async () => {
    const closed = await startWebServer(() => {});
    const apiUrl = closed.url;
    await closed.close();
    const browser = browserTool(apiUrl);
    const result = await browser.call({ action: 'go_back' });
    expect(result).toMatchObject(err(expect.any(String)));
    const { error } = result as { error: string };
    expect(error).toContain(`The sandbox's browser service at ${apiUrl} did not answer (curl: (7)`);
    expect(error).toContain('sandbox_image_name');
    await browser.close();
  });
});

describe('SandboxManus and sandbox_browser', () => {
  const toolsOf = (sandbox: SandboxProvider, browser?: false | object) =>
    createSandboxManus({ sandbox, ...(browser !== undefined ? { browser } : {}) }).tools.map((t) => t.spec.name);
  const daytona: SandboxProvider = { name: 'daytona', create: () => provider.create({} as never) };

  it('has it on Daytona (whose sandbox image serves the browser), elsewhere when asked', () => {
    expect(toolsOf(daytona)).toContain('sandbox_browser');
    expect(toolsOf(daytona, false)).not.toContain('sandbox_browser');
    expect(toolsOf(provider)).not.toContain('sandbox_browser');
    expect(toolsOf(provider, {})).toContain('sandbox_browser');
  });

  it('in a run on Daytona (the stand-in of its API), the page reaches the model', async () => {
    const standIn = await startDaytonaStandIn();
    const llm = await startOpenAiServer({
      script: [
        { toolCalls: [{ name: 'sandbox_browser', arguments: { action: 'navigate_to', url: `${site.url}/` } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    try {
      const sandbox = createDaytonaSandboxProvider(
        { ...DEFAULT_DAYTONA_SETTINGS, apiKey: 'key', serverUrl: standIn.url },
        { workspace: await tempWorkspace() },
      );
      // The stand-in runs the sandbox's commands on this machine: the service is where the test put it.
      const agent = createSandboxManus({ sandbox, browser: { apiUrl: service.apiUrl } });
      const outcome = await run(agent, 'Open the trip planner', {
        llm: createOpenAiLlm({ model: 'gpt-4o', apiKey: 'sk-test', baseURL: llm.baseURL, maxRetries: 0 }),
      });
      expect(outcome.finishReason).toBe('terminated');
      const seen = llm.requests[1]?.messages.find((message) => message.role === 'tool');
      expect(JSON.parse(String(seen?.content))).toMatchObject({ success: true, title: 'Trip planner' });
      expect(service.requests.at(-1)).toEqual({ action: 'navigate_to', params: { url: `${site.url}/` } });
    } finally {
      await llm.close();
      await standIn.close();
    }
  });
});
