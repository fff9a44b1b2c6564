// Pages are the site's: none may stall the event loop or outlast web_fetch's time limit, however
// its markup is made.
import { toolSession } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { createWebFetch } from '../src/index.js';
import { MAX_DEPTH, pageText, parseHtml } from '../src/web/html.js';
import { whileTicking } from './ticking.js';
import { send, serversPerTest } from './webServer.js';

const { serve } = serversPerTest();
const reach = (url: string) => ({ allowHosts: [new URL(url).host] });

const innermost = 'The innermost paragraph is the one piece of text this page has, and it is long enough to read.';
const nested = (depth: number) =>
  `<html><head><title>Deep</title></head><body>${'<div>'.repeat(depth)}<p>${innermost}</p>${'</div>'.repeat(depth)}</body></html>`;

describe('web_fetch with a hostile page', () => {
  it.each([2_000, 10_000])(
    'reads a page %i elements deep, and the event loop runs meanwhile',
    async (depth) => {
      const { url } = await serve(send(nested(depth)));
      // Only a page that is never read reaches this limit: the test's own time-out comes first.
      const tool = createWebFetch({ ...reach(url), timeoutSec: 600 });
      const { value: result, ticks } = await whileTicking(() => toolSession(tool).call({ urls: url }));
      expect(result.isError).toBe(false);
      expect(result.output).toMatch(/^# Deep\n/);
      expect(result.output).toContain(innermost);
      expect(ticks).toBeGreaterThan(0);
    },
    120_000,
  );

  it('stops reading a page at its time limit, and the event loop runs meanwhile', async () => {
    // Half a million nested elements: building the tree alone would take hours on any machine.
    const { url } = await serve(send(nested(500_000)));
    const tool = createWebFetch({ ...reach(url), timeoutSec: 5 });
    const { value: result, ticks } = await whileTicking(() => toolSession(tool).call({ urls: url }));
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(new RegExp(`^Error: # ${url}\\nError: timed out after 5 s`));
    expect(ticks).toBeGreaterThan(0);
  });
});

describe('the page parser', () => {
  it(`keeps what lies deeper than ${MAX_DEPTH} elements as text, in order`, async () => {
    const depth = MAX_DEPTH * 4;
    const html = Array.from({ length: depth }, (_, i) => `<div>w${i} `).join('');
    const words = Array.from({ length: depth }, (_, i) => `w${i}`).join(' ');
    const document = await parseHtml(html);
    expect(pageText(document)).toBe(words);
    let deepest = 0;
    for (let node = document.querySelector('div'); node; node = node.querySelector(':scope > div')) deepest++;
    expect(deepest).toBeLessThan(depth);
  });
});
