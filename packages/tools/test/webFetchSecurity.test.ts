// Pages are the site's: none may stall the event loop or outlast web_fetch's time limit, however
// its markup is made.
import { toolSession } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, pageText, parseHtml } from '../src/web/html.js';
import { readableMarkdown } from '../src/web/markdown.js';
import { WorkerTimeoutError } from '../src/web/workerJob.js';
import { createWebFetch } from '../src/webFetch.js';
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

  it('stops reading a page at its time limit, wherever it is then', async () => {
    // Pages are read in linear time now, so no page is sure to outlast a limit; a limit of 1 ms
    // is: no machine starts a worker thread and loads the parsers that fast.
    const reading = readableMarkdown(nested(500_000), 'https://example.test/', { timeoutMs: 1 });
    await expect(reading).rejects.toThrow(
      new WorkerTimeoutError('reading the page took longer than 0.001 s and was stopped'),
    );
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
