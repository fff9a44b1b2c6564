import { describe, expect, it } from 'vitest';
import { fetchPageContent } from '../src/search/fetchContent.js';
import { BROWSER_USER_AGENT, httpRequest } from '../src/web/http.js';
import { networkPolicy } from '../src/web/networkPolicy.js';
import { send, serversPerTest } from './webServer.js';

const { serve, hosts } = serversPerTest();
/** The test servers, and no other local address, may be reached. */
const toServers = () => networkPolicy({ allowHosts: hosts() }, 'test');
// Only a request that never answers reaches this; the tests with one set their own.
const limits = { timeoutMs: 600_000, maxBytes: 1024 * 1024 };
const get = (
  url: string,
  headers: Record<string, string> = {},
  more: Partial<Parameters<typeof httpRequest>[2]> = {},
) => httpRequest(url, { headers }, { ...limits, network: toServers(), ...more });

describe('the HTTP client every web tool uses', () => {
  it('fetches only http(s) URLs', async () => {
    for (const url of ['file:///etc/passwd', 'data:text/plain,hello', 'ftp://example.com/x', 'javascript:alert(1)']) {
      await expect(get(url)).rejects.toThrow(/^only http:\/\/ and https:\/\/ URLs can be fetched, not /);
    }
    await expect(get('not a url')).rejects.toThrow('not a valid absolute URL: "not a url"');
  });

  it('follows redirects, but not to anything other than http(s), and not forever', async () => {
    const { url } = await serve((request, response) => {
      const to: Record<string, string> = {
        '/a': '/b',
        '/b': '/c',
        '/file': 'file:///etc/passwd',
      };
      const hop = /^\/loop(\d+)$/.exec(request.path);
      if (to[request.path]) response.writeHead(302, { location: to[request.path] }).end();
      else if (hop) response.writeHead(301, { location: `/loop${Number(hop[1]) + 1}` }).end();
      else send(`<p>${request.path}</p>`)(request, response);
    });
    const page = await get(`${url}/a`);
    expect(page).toMatchObject({ url: `${url}/c`, status: 200, mediaType: 'text/html', text: '<p>/c</p>' });
    await expect(get(`${url}/file`)).rejects.toThrow(
      'redirected to file:///etc/passwd, which is not an http(s) URL: refused',
    );
    await expect(get(`${url}/loop0`)).rejects.toThrow('more than 5 redirects');
  });

  it("sends a browser's User-Agent under that name, and a request's own headers only to the site they were meant for", async () => {
    const other = await serve(send('other'));
    const { url, requests } = await serve((request, response) => {
      if (request.path === '/away') response.writeHead(302, { location: `${other.url}/landing` }).end();
      else if (request.path === '/here') response.writeHead(302, { location: '/landing' }).end();
      else send('ok')(request, response);
    });
    await get(`${url}/here`, { 'x-subscription-token': 'secret' });
    expect(requests.at(-1)?.headers['x-subscription-token']).toBe('secret');
    expect(requests.at(-1)?.headers['user-agent']).toBe(BROWSER_USER_AGENT);
    expect(requests.at(-1)?.headers).not.toHaveProperty('websearch');

    await get(`${url}/away`, { 'x-subscription-token': 'secret' });
    expect(other.requests[0]?.headers).not.toHaveProperty('x-subscription-token');
    expect(other.requests[0]?.headers['user-agent']).toBe(BROWSER_USER_AGENT);
  });

  it('reads a body only up to maxBytes, then stops the download', async () => {
    let sent = 0;
    const { url } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      // An endless body: only a reader that stops can finish.
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) sent += chunk.length;
      };
      response.on('drain', pump);
      pump();
    });
    const page = await get(url, {}, { maxBytes: 100_000 });
    expect(page.truncated).toBe(true);
    expect(page.text).toHaveLength(100_000);
    expect(sent).toBeLessThan(50 * 1024 * 1024);
  });

  it('gives up after its time limit, and says so', async () => {
    const { url } = await serve(() => {});
    await expect(get(url, {}, { timeoutMs: 100 })).rejects.toThrow('timed out after 0.1 s');
  });

  it('says when it cannot connect', async () => {
    const { url, close } = await serve(send('x'));
    await close();
    await expect(get(url)).rejects.toThrow('could not connect: ECONNREFUSED');
  });

  it('decodes the charset the server or the page names', async () => {
    const gbk = Buffer.from([0xd6, 0xd0, 0xce, 0xc4]); // 中文 in GBK
    const { url } = await serve((request, response) => {
      if (request.path === '/header') response.writeHead(200, { 'content-type': 'text/html; charset=gbk' }).end(gbk);
      else
        response
          .writeHead(200, { 'content-type': 'text/html' })
          .end(Buffer.concat([Buffer.from('<html><head><meta charset="gbk"></head><body>'), gbk]));
    });
    expect((await get(`${url}/header`)).text).toBe('中文');
    expect((await get(`${url}/meta`)).text).toContain('<body>中文');
  });
});

describe("fetch_content's page reader", () => {
  // Only a page that never answers reaches this; /slow sets its own.
  const content = { timeoutMs: 600_000, maxChars: 10_000, maxBytes: 1024 * 1024 };
  const read = async (url: string, more: Partial<typeof content> = {}) =>
    (await fetchPageContent(url, { ...content, network: toServers(), ...more }, new AbortController().signal)).content;

  it('keeps the text without scripts, styles, navigation, header and footer, whitespace collapsed, cut with a marker', async () => {
    const { url } = await serve(
      send(
        '<!doctype html><title>T</title><script>var secret = 1</script><style>.x{}</style><nav><a href="/">Home</a></nav>' +
          '<header>Masthead</header><main><h1>Heading</h1><p>First\n\n   paragraph.</p><p>Second.</p></main><footer>Footer</footer>',
      ),
    );
    expect(await read(url)).toBe('Heading First paragraph. Second.');
    expect(await read(url, { maxChars: 7 })).toBe('Heading\n…[cut: 25 more characters]');
  });

  it('has nothing for pages that are not 200, not HTML or text, too slow, or redirected off http(s)', async () => {
    const { url } = await serve((request, response) => {
      if (request.path === '/gone') send('<p>gone</p>', 'text/html', 410)(request, response);
      else if (request.path === '/image') send('\x89PNG', 'image/png')(request, response);
      else if (request.path === '/text') send('plain\n\ntext', 'text/plain')(request, response);
      else if (request.path === '/file') response.writeHead(302, { location: 'file:///etc/passwd' }).end();
      // /slow never answers
    });
    expect(await read(`${url}/gone`)).toBeUndefined();
    expect(await read(`${url}/image`)).toBeUndefined();
    expect(await read(`${url}/file`)).toBeUndefined();
    expect(await read(`${url}/slow`, { timeoutMs: 100 })).toBeUndefined();
    expect(await read(`${url}/text`)).toBe('plain text');
  });
});
