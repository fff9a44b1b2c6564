import type { Browser } from 'playwright-core';
import { startWebServer } from './webServer.js';

/** What one request to the service asked for. */
export interface ServiceRequest {
  readonly action: string;
  readonly params: Record<string, unknown>;
}

/**
 * A stand-in of the browser automation service of OpenManus's sandbox image (an HTTP API on port
 * 8003 inside the sandbox), driving a real Chromium: `POST /api/automation/<action>` with the
 * action's parameters as JSON, answered with the page's state and a screenshot. Elements are
 * numbered as the model sees them: links, buttons and form fields in document order.
 */
export async function startBrowserService(browser: Browser) {
  const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
  const page = await context.newPage();
  // Only an action that never ends reaches this: the test's own time-out comes first.
  page.setDefaultTimeout(600_000);
  const requests: ServiceRequest[] = [];
  const elements = () => page.locator('a, button, input, select, textarea');
  const actions: Record<string, (params: Record<string, unknown>) => Promise<string>> = {
    navigate_to: async ({ url }) => {
      await page.goto(String(url));
      return `Navigated to ${url}`;
    },
    go_back: async () => {
      await page.goBack();
      return 'Navigated back';
    },
    click_element: async ({ index }) => {
      await elements().nth(Number(index)).click();
      await page.waitForLoadState();
      return `Clicked element ${index}`;
    },
    input_text: async ({ index, text }) => {
      await elements().nth(Number(index)).fill(String(text));
      return `Input ${JSON.stringify(text)} into element ${index}`;
    },
    wait: async ({ seconds }) => `Waited for ${seconds} seconds`,
  };
  const server = await startWebServer(async ({ path, body }, res) => {
    const action = path.replace(/^\/api\/automation\//, '');
    const params = JSON.parse(body || '{}') as Record<string, unknown>;
    requests.push({ action, params });
    let answer: Record<string, unknown>;
    try {
      const perform = actions[action];
      if (!perform) throw new Error(`Unknown action: ${action}`);
      const message = await perform(params);
      answer = {
        success: true,
        message,
        url: page.url(),
        title: await page.title(),
        element_count: await elements().count(),
        // A string: the test files are type-checked without the DOM's types.
        pixels_below: await page.evaluate('Math.max(0, document.documentElement.scrollHeight - scrollY - innerHeight)'),
        screenshot_base64: (await page.screenshot()).toString('base64'),
      };
    } catch (error) {
      answer = { success: false, message: error instanceof Error ? error.message.split('\n')[0] : String(error) };
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  return {
    apiUrl: server.url,
    requests,
    close: async () => {
      await server.close();
      await context.close();
    },
  };
}
