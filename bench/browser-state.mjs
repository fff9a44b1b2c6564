// What a browser step costs in model input: for each fixture page, the tokens of our page state beside
// OpenManus's (its get_current_state JSON plus the full-page quality-100 JPEG it attaches) and
// Playwright's full AI snapshot. Run after a build: `pnpm build && node bench/browser-state.mjs`.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_ARGS, createBrowserUse, findChrome } from '@openmanus/browser';
import { imageTokens, loadTokenizer, textTokens } from '@openmanus/core/kernel';
import { toolSession } from '@openmanus/core/testing';
import { chromium } from 'playwright-core';

const site = fileURLToPath(new URL('../packages/browser/test/fixtures/site/', import.meta.url));
export const STATE_PAGES = {
  'home (form, links, tabs)': '/index.html',
  'selects (native and ARIA)': '/selects.html',
  'overlay (cookie banner)': '/overlay.html',
  'SPA list': '/spa.html',
  'travel article': '/travel/kyoto.html',
  '500-row price list': '/rows.html',
};

/** The fixture pages as plain files on 127.0.0.1. */
async function serveSite() {
  const server = createServer(async (request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname));
    try {
      const body = await readFile(join(site, path === '/' ? 'index.html' : path));
      const type = extname(path) === '.css' ? 'text/css' : extname(path) === '.js' ? 'text/javascript' : 'text/html';
      response.writeHead(200, { 'content-type': `${type}; charset=utf-8` }).end(body);
    } catch {
      response.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>Not found</title>');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { host: `127.0.0.1:${server.address().port}`, close: () => server.close() };
}

/**
 * OpenManus's get_current_state for a page (browser_use_tool.py): JSON, indent 4, with browser-use's
 * clickable-element list (`[i]<tag>text</tag>` for every interactive element of the page, not just
 * the viewport), plus the full-page JPEG at quality 100 it sends as an image.
 */
async function openManusState(page) {
  const elements = await page.evaluate(() =>
    [
      ...document.querySelectorAll(
        'a[href],button,input,select,textarea,[role=button],[role=link],[role=checkbox],[role=combobox],[onclick]',
      ),
    ]
      .map((el, i) => {
        const tag = el.tagName.toLowerCase();
        const attrs = ['type', 'name', 'placeholder', 'aria-label', 'role', 'value']
          .filter((a) => el.getAttribute(a))
          .map((a) => ` ${a}="${el.getAttribute(a)}"`)
          .join('');
        return `[${i}]<${tag}${attrs}>${(el.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 100)}</${tag}>`;
      })
      .join('\n'),
  );
  const scroll = await page.evaluate(() => ({
    pixels_above: window.scrollY,
    pixels_below: Math.max(0, document.documentElement.scrollHeight - window.scrollY - window.innerHeight),
    total_height: document.documentElement.scrollHeight,
  }));
  const json = JSON.stringify(
    {
      url: page.url(),
      title: await page.title(),
      tabs: [{ page_id: 0, url: page.url(), title: await page.title() }],
      help: '[0], [1], [2], etc., represent clickable indices corresponding to the elements listed. Clicking on these indices will navigate to or interact with the respective content behind them.',
      interactive_elements: elements,
      scroll_info: scroll,
      viewport_height: page.viewportSize()?.height ?? 0,
    },
    null,
    4,
  );
  const shot = await page.screenshot({ fullPage: true, type: 'jpeg', quality: 100, animations: 'disabled' });
  return {
    text: textTokens(json, 'o200k_base'),
    image: imageTokens({ base64: shot.toString('base64'), mimeType: 'image/jpeg' }),
  };
}

/** Tokens per page: { page: { ours, openManusText, openManusImage, snapshot } }. */
export async function browserStateTokens() {
  await loadTokenizer('o200k_base');
  const served = await serveSite();
  const browser = await chromium.launch({
    executablePath: findChrome(undefined, process.env),
    args: [...CHROMIUM_ARGS],
  });
  const results = {};
  try {
    for (const [name, path] of Object.entries(STATE_PAGES)) {
      const url = `http://${served.host}${path}`;
      const session = toolSession(createBrowserUse({ allowHosts: [served.host] }));
      try {
        const state = await session.call({ action: 'go_to_url', url });
        if (state.isError) throw new Error(`${name}: ${state.output}`);
        const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
        try {
          await page.goto(url);
          const snapshot = textTokens(await page.ariaSnapshot({ mode: 'ai' }), 'o200k_base');
          const openManus = await openManusState(page);
          results[name] = { ours: textTokens(state.output, 'o200k_base'), openManus, snapshot };
        } finally {
          await page.close();
        }
      } finally {
        await session.close();
      }
    }
  } finally {
    await browser.close();
    served.close();
  }
  return results;
}

/** The report's table. */
export function browserStateTable(results) {
  const n = (x) => Math.round(x).toLocaleString('en-US');
  return [
    '| page | ours | OpenManus (JSON + full-page screenshot) | Playwright full AI snapshot | ours ÷ snapshot |',
    '|---|---:|---:|---:|---:|',
    ...Object.entries(results).map(
      ([page, r]) =>
        `| ${page} | ${n(r.ours)} | ${n(r.openManus.text + r.openManus.image)} (${n(r.openManus.text)} + ${n(r.openManus.image)}) | ${n(r.snapshot)} | ${(r.ours / r.snapshot).toFixed(2)} |`,
    ),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(
    ['Browser page state, tokens (o200k_base) per step:', '', ...browserStateTable(await browserStateTokens())].join(
      '\n',
    ),
  );
}
