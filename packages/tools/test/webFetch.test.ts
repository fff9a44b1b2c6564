import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ok } from '@openmanus/core';
import { toolSession } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { createWebFetch, fetchWebPage } from '../src/webFetch.js';
import { failureOf, send, serversPerTest } from './webServer.js';

const article = readFileSync(join(import.meta.dirname, 'fixtures', 'web', 'article.html'), 'utf8');

const { serve } = serversPerTest();
/** Lets the tool reach the test server, and no other local address. */
const reach = (url: string) => ({ allowHosts: [new URL(url).host] });

describe('web_fetch', () => {
  it('turns an article into Markdown of its main content: title, headings, lists, absolute links; no navigation or scripts', async () => {
    const { url } = await serve(send(article));
    const { output, isError } = await toolSession(createWebFetch(reach(url))).call({
      urls: `${url}/posts/moss-gardens/`,
    });
    expect(isError).toBe(false);
    expect(output).toMatch(/^# Kyoto's Moss Gardens: A Visitor's Guide/);
    expect(output).toContain(`URL: ${url}/posts/moss-gardens/\nContent-Type: text/html\n`);
    expect(output).toContain('## Saihō-ji, the moss temple');
    expect(output).toContain(`[Saihō-ji](${url}/places/saihoji/)`);
    expect(output).toContain("[temple's official booking page](https://saihoji-kokedera.com/en/reservation.html)");
    expect(output).toContain(`[Kyoto temple etiquette guide](${url}/posts/guides/kyoto-etiquette/)`);
    expect(output).toMatch(/^-\s+\*\*Gio-ji\*\* in Arashiyama/m);
    expect(output).toContain(`![Moss at Gio-ji](${url}/images/gio-ji.jpg)`);
    expect(output).toContain('```\nOpening hours: 9:00–17:00 (last entry 16:30)\n```');
    // What is not the article: scripts, navigation, the footer; links that are not http(s) keep only their text.
    for (const absent of [
      'trackingSecret',
      'gtag',
      'Newsletter',
      'Privacy',
      'javascript:',
      'data:image',
      'We use cookies',
    ]) {
      expect(output).not.toContain(absent);
    }
    expect(output).toContain('share this post');
  });

  it('cuts a long page with a marker, and says when only the start of a page was read', async () => {
    const { url } = await serve((request, response) => {
      if (request.path === '/big') send(`<article><p>${'long text '.repeat(5000)}</p></article>`)(request, response);
      else send('x'.repeat(5000), 'text/plain')(request, response);
    });
    const cut = await fetchWebPage(`${url}/big`, { ...reach(url), maxChars: 300 });
    expect(cut.isOk() && cut.value.text).toBe(
      `${'long text '.repeat(30)}\n…[cut: ${'long text '.repeat(5000).trim().length - 300} more characters]`,
    );
    const partial = await fetchWebPage(`${url}/plain`, { ...reach(url), maxBytes: 1000 });
    expect(partial.isOk() && partial.value).toMatchObject({
      truncated: true,
      text: `${'x'.repeat(1000)}\n…[only the first 1000 bytes of the page were read]`,
    });
  });

  it('returns plain text and JSON as they are', async () => {
    const json = '{"city": "Kyoto", "population": 1463723}';
    const { url } = await serve((request, response) => {
      if (request.path === '/data.json') send(json, 'application/json; charset=utf-8')(request, response);
      else send('line one\n  line two\n', 'text/plain')(request, response);
    });
    expect(await fetchWebPage(`${url}/data.json`, reach(url))).toEqual(
      ok({ url: `${url}/data.json`, mediaType: 'application/json', title: '', text: json, truncated: false }),
    );
    const text = await fetchWebPage(`${url}/notes.txt`, reach(url));
    expect(text.isOk() && text.value.text).toBe('line one\n  line two\n');
  });

  it('gives a page without text its title and no text', async () => {
    const { url } = await serve(
      send('<html><head><title>Nothing here</title></head><body><script>x()</script></body></html>'),
    );
    expect(await fetchWebPage(url, reach(url))).toMatchObject(ok({ title: 'Nothing here', text: '' }));
  });

  it('reports a status other than 2xx, and names the type of content it will not read', async () => {
    const { url } = await serve((request, response) => {
      if (request.path === '/paper.pdf') send('%PDF-1.7 binary', 'application/pdf')(request, response);
      else if (request.path === '/blob') send('\u0000\u0001\u0002binary', '')(request, response);
      else send('<h1>Not here</h1>', 'text/html', 404)(request, response);
    });
    const session = toolSession(createWebFetch(reach(url)));
    expect(await session.call({ urls: [`${url}/missing`] })).toEqual({
      isError: true,
      output: `Error: # ${url}/missing\nError: HTTP 404 Not Found from ${url}/missing`,
    });
    expect((await session.call({ urls: `${url}/paper.pdf` })).output).toContain(
      `Error: ${url}/paper.pdf is application/pdf, not a page web_fetch can read (HTML, text or JSON); it was not downloaded`,
    );
    expect(failureOf(await fetchWebPage(`${url}/blob`, reach(url)))).toEqual({
      fetchError: true,
      code: 'WEB_FETCH_FAILED',
      message: `${url}/blob is binary content, not text`,
    });
    expect(failureOf(await fetchWebPage(`${url}/missing`, reach(url)))).toMatchObject({
      code: 'WEB_FETCH_FAILED',
      status: 404,
    });
  });

  it('fetches only http(s), on redirects too', async () => {
    const { url, requests } = await serve((_request, response) => {
      response.writeHead(302, { location: 'file:///etc/passwd' }).end();
    });
    const session = toolSession(createWebFetch(reach(url)));
    const { output, isError } = await session.call({
      urls: ['file:///etc/passwd', 'data:text/html,<p>hi</p>', `${url}/go`],
    });
    expect(isError).toBe(true);
    expect(output).toContain('# file:///etc/passwd\nError: only http:// and https:// URLs can be fetched, not file:');
    expect(output).toContain(
      '# data:text/html,<p>hi</p>\nError: only http:// and https:// URLs can be fetched, not data:',
    );
    expect(output).toContain(
      `# ${url}/go\nError: redirected to file:///etc/passwd, which is not an http(s) URL: refused`,
    );
    expect(requests).toHaveLength(1);
    expect(output).not.toContain('root:');
  });

  it('gives up on a page that takes too long', async () => {
    const { url } = await serve(() => {});
    const result = await fetchWebPage(url, { ...reach(url), timeoutSec: 0.1 });
    expect(failureOf(result)).toEqual({ fetchError: true, code: 'WEB_FETCH_FAILED', message: 'timed out after 0.1 s' });
  });

  it('fetches several URLs at once; one that fails does not hide the others', async () => {
    // Each page answers only once the other has been asked for: one at a time would never finish.
    let arrived = 0;
    const bothAsked = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (arrived === 2) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });
    const { url } = await serve(async (request, response) => {
      if (request.path === '/gone') return send('gone', 'text/plain', 410)(request, response);
      arrived++;
      await bothAsked;
      send(`<html><head><title>Page ${request.path}</title></head><body><p>Body of ${request.path}.</p></body></html>`)(
        request,
        response,
      );
    });
    // Only a call that waits for ever reaches this limit: the test's own time-out ends one first.
    const tool = createWebFetch({ ...reach(url), timeoutSec: 600 });
    const { output, isError } = await toolSession(tool).call({ urls: [`${url}/one`, `${url}/two`, `${url}/gone`] });
    expect(isError).toBe(false);
    const sections = output.split('\n\n---\n\n');
    expect(sections).toHaveLength(3);
    expect(sections[0]).toMatch(/^# Page \/one\n[\s\S]*Body of \/one\./);
    expect(sections[1]).toMatch(/^# Page \/two\n[\s\S]*Body of \/two\./);
    expect(sections[2]).toBe(`# ${url}/gone\nError: HTTP 410 Gone from ${url}/gone`);
  });

  it('refuses bad arguments with a clear observation', async () => {
    const session = toolSession(createWebFetch({ maxUrls: 2 }));
    expect((await session.call({ urls: ['a', 'b', 'c'] })).output).toMatch(
      /invalid arguments for web_fetch[\s\S]*urls/,
    );
    expect((await session.call({})).output).toMatch(/invalid arguments for web_fetch[\s\S]*urls/);
  });
});
