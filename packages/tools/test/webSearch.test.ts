import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, ok, type Result } from '@openmanus/core';
import { toolSession } from '@openmanus/core/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { engineOrder } from '../src/search/cascade.js';
import { builtInEngines } from '../src/search/engines.js';
import { googleEngine } from '../src/search/google.js';
import { SearchError } from '../src/search/searchError.js';
import { resolveSearch, searchOptionsFrom } from '../src/search/settings.js';
import type { EngineHit, SearchEngine } from '../src/search/types.js';
import { createWebSearch, searchWeb } from '../src/search/webSearch.js';
import { fixture, send, serversPerTest } from './webServer.js';

/** What a failed search says, as data: `searchWeb`'s `SearchError`. */
function failureOf(result: Result<unknown, SearchError>) {
  if (result.isOk()) return 'found';
  const { code, message, failures, cancelled } = result.error;
  return { searchError: SearchError.isInstance(result.error), code, message, failures, cancelled };
}

const { serve } = serversPerTest();

/** An engine of our own, counting its calls. */
function engine(
  name: string,
  answer: (call: number, signal: AbortSignal) => Promise<readonly EngineHit[]> | readonly EngineHit[],
) {
  let calls = 0;
  const self: SearchEngine & { readonly calls: number } = {
    name,
    get calls() {
      return calls;
    },
    search: async (_query, { signal }) => answer(++calls, signal),
  };
  return self;
}
const hits = (...urls: string[]): EngineHit[] => urls.map((url, i) => ({ title: `Page ${i + 1}`, url }));
// Short waits between rounds; an engine's limit only one that never answers reaches (those tests set their own).
const fast = { retryDelaySec: 0.01, engineTimeoutSec: 600 };

describe('the engine order', () => {
  it('is the preferred engine, then the fallbacks, then the rest, each once, in any case', () => {
    expect(engineOrder('Bing', ['DuckDuckGo', 'bing', 'Google'], ['google', 'baidu', 'duckduckgo', 'bing'])).toEqual([
      'bing',
      'duckduckgo',
      'google',
      'baidu',
    ]);
  });

  it("is OpenManus's by default, with the API engines after the pages once they are configured", () => {
    const names = (options: Parameters<typeof resolveSearch>[0]) => resolveSearch(options).engines.map((e) => e.name);
    expect(names({})).toEqual(['google', 'duckduckgo', 'baidu', 'bing']);
    expect(names({ searxngUrl: 'https://searx.example.org', braveApiKey: 'k' })).toEqual([
      'google',
      'duckduckgo',
      'baidu',
      'bing',
      'searxng',
      'brave',
    ]);
    expect(
      names({ engine: 'SearXNG', fallbackEngines: ['Brave'], searxngUrl: 'https://s.example', braveApiKey: 'k' }),
    ).toEqual(['searxng', 'brave', 'google', 'baidu', 'duckduckgo', 'bing']);
    expect(names({ engines: [engine('mine', () => [])] })).toEqual(['mine']);
  });

  it('comes from [search] in config.toml', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openmanus-search-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'config'));
    await writeFile(
      join(dir, 'config', 'config.toml'),
      '[llm]\nmodel = "m"\napi_key = "k"\n[search]\nengine = "Bing"\nfallback_engines = ["Brave"]\nbrave_api_key = "bk"\nretry_delay = 5\nmax_retries = 1\nlang = "de"\ncountry = "at"\n',
    );
    const config = loadConfig({ cwd: dir, env: {} });
    if (!config.isOk()) throw new Error(config.error.message);
    const options = searchOptionsFrom(config.value.search);
    expect(options).toEqual({
      engine: 'bing',
      fallbackEngines: ['brave'],
      braveApiKey: 'bk',
      retryDelaySec: 5,
      maxRetries: 1,
      lang: 'de',
      country: 'at',
    });
    const resolved = resolveSearch(options);
    expect(resolved.engines.map((e) => e.name)).toEqual(['bing', 'brave', 'google', 'baidu', 'duckduckgo']);
    expect(resolved).toMatchObject({ retryDelayMs: 5000, maxRetries: 1, lang: 'de', country: 'at' });
  });

  it('refuses, when the tool is made, an engine it does not know or cannot use', () => {
    expect(() => createWebSearch({ engine: 'yahoo' })).toThrow(
      "web_search: unknown search engine 'yahoo' (available: google, baidu, duckduckgo, bing)",
    );
    expect(() => createWebSearch({ fallbackEngines: ['brave'] })).toThrow(
      'web_search: the brave engine needs braveApiKey ([search] brave_api_key)',
    );
    expect(() => createWebSearch({ retryDelaySec: -1 })).toThrow(RangeError);
    expect(() => createWebSearch({ engines: [] })).toThrow('web_search: no search engines to use');
    expect(() => createWebSearch({ lang: 'english' })).toThrow('web_search: lang "english" is not a language code');
    expect(() => createWebSearch({ country: 'usa' })).toThrow('web_search: country "usa" is not a country code');
  });
});

describe('the cascade', () => {
  it('moves on from an engine that throws, times out or finds nothing, and says which failed and why', async () => {
    let timedOutSignal: AbortSignal | undefined;
    const engines = [
      engine('thrower', () => {
        throw new Error('blocked by a CAPTCHA');
      }),
      // Ignores its signal: the cascade still leaves it behind when its time is up.
      engine('sleeper', (_call, signal) => {
        timedOutSignal = signal;
        return new Promise<never>(() => {});
      }),
      engine('empty', () => []),
      engine('working', () => hits('https://a.example/', 'https://b.example/')),
      engine('never-asked', () => hits('https://c.example/')),
    ];
    const result = await searchWeb('q', { engines, ...fast, engineTimeoutSec: 0.1 });
    expect(result).toMatchObject(
      ok({
        engine: 'working',
        failures: [
          { engine: 'thrower', reason: 'blocked by a CAPTCHA', round: 1 },
          { engine: 'sleeper', reason: 'timed out after 0.1 s', round: 1 },
          { engine: 'empty', reason: 'no results', round: 1 },
        ],
      }),
    );
    expect(timedOutSignal?.aborted).toBe(true);
    expect(engines[4]?.calls).toBe(0);
  });

  it('gives every result the same shape: no URL or a non-http(s) one dropped, repeats dropped, missing titles named, capped', async () => {
    const messy = engine('messy', () => [
      { title: 'No URL' },
      { title: '  Spaced\n  title ', url: ' https://a.example/x ', description: ' two\n lines ' },
      { url: 'javascript:alert(1)', title: 'Script' },
      { url: 'https://a.example/x', title: 'Repeat' },
      { url: 'https://b.example/' },
      { url: 'https://c.example/', title: '' },
      { url: 'https://d.example/' },
    ]);
    const result = await searchWeb('q', { engines: [messy], ...fast, numResults: 3 });
    expect(result.isOk() && result.value.results).toEqual([
      { title: 'Spaced title', url: 'https://a.example/x', description: 'two lines' },
      { title: 'Result 2', url: 'https://b.example/' },
      { title: 'Result 3', url: 'https://c.example/' },
    ]);
    const one = await searchWeb('q', { engines: [messy], ...fast, numResults: 0 });
    expect(one.isOk() && one.value.results).toHaveLength(1);
    expect(failureOf(await searchWeb(' ', { engines: [messy], ...fast }))).toEqual({
      searchError: true,
      code: 'SEARCH_FAILED',
      message: 'The query is empty.',
      failures: [],
      cancelled: false,
    });
    expect(messy.calls).toBe(2);
  });

  it('when every engine failed, waits retry_delay and tries them all again, max_retries times', async () => {
    const flaky = engine('flaky', (call) => (call < 3 ? [] : hits('https://a.example/')));
    const started = Date.now();
    const result = await searchWeb('q', { engines: [flaky], ...fast, retryDelaySec: 0.05, maxRetries: 3 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(result).toMatchObject(
      ok({
        engine: 'flaky',
        failures: [
          { engine: 'flaky', reason: 'no results', round: 1 },
          { engine: 'flaky', reason: 'no results', round: 2 },
        ],
      }),
    );
  });

  it('after the last round, fails with each engine and why', async () => {
    const a = engine('a', () => {
      throw new Error('HTTP 503');
    });
    const b = engine('b', () => []);
    const result = await searchWeb('q', { engines: [a, b], ...fast, maxRetries: 2 });
    expect(failureOf(result)).toEqual({
      searchError: true,
      code: 'SEARCH_FAILED',
      message: 'All search engines failed in each of 3 rounds, 0.01 s apart:\n- a: HTTP 503\n- b: no results',
      failures: expect.arrayContaining([{ engine: 'b', reason: 'no results', round: 3 }]),
      cancelled: false,
    });
    expect([a.calls, b.calls]).toEqual([3, 3]);
  });

  it('a cancel during the wait between rounds ends the search at once', async () => {
    const controller = new AbortController();
    const failing = engine('failing', () => {
      // Cancelled while the cascade waits out its (ten-minute) retry delay.
      setTimeout(() => controller.abort(), 20);
      return [];
    });
    // Waiting out the delay would outlast the test's own time-out.
    const result = await searchWeb('q', { engines: [failing], retryDelaySec: 600, signal: controller.signal });
    expect(failureOf(result)).toMatchObject({
      code: 'SEARCH_CANCELLED',
      cancelled: true,
      message: 'The search was cancelled.\n- failing: no results',
    });
    expect(failing.calls).toBe(1);
  });

  it('a cancel during an engine call stops it and asks no other engine', async () => {
    const controller = new AbortController();
    let engineSignal: AbortSignal | undefined;
    const slow = engine('slow', (_call, signal) => {
      engineSignal = signal;
      setTimeout(() => controller.abort(), 10);
      return new Promise<never>(() => {});
    });
    const next = engine('next', () => hits('https://a.example/'));
    const result = await searchWeb('q', { engines: [slow, next], ...fast, signal: controller.signal });
    expect(failureOf(result)).toMatchObject({ code: 'SEARCH_CANCELLED', cancelled: true });
    expect(engineSignal?.aborted).toBe(true);
    expect(next.calls).toBe(0);
  });
});

describe('the web_search tool', () => {
  it("answers in OpenManus's layout, with the engines that failed first", async () => {
    const tool = createWebSearch({
      engines: [
        engine('down', () => {
          throw new Error('HTTP 500');
        }),
        engine('up', () => [
          {
            title: 'Kyoto - Wikipedia',
            url: 'https://en.wikipedia.org/wiki/Kyoto',
            description: 'Kyoto is a city in Japan.',
          },
          { url: 'https://kyoto.travel/en/' },
        ]),
      ],
      ...fast,
    });
    const session = toolSession(tool);
    expect(await session.call({ query: 'kyoto sights', num_results: 2, lang: 'ja', country: 'jp' })).toEqual({
      isError: false,
      output: [
        "Search results for 'kyoto sights':",
        '',
        '1. Kyoto - Wikipedia',
        '   URL: https://en.wikipedia.org/wiki/Kyoto',
        '   Description: Kyoto is a city in Japan.',
        '',
        '2. Result 2',
        '   URL: https://kyoto.travel/en/',
        '',
        'Metadata:',
        '- Total results: 2',
        '- Language: ja',
        '- Country: jp',
        '- Engine: up',
        '- Failed first: down (HTTP 500)',
      ].join('\n'),
    });
    expect(tool.spec).toMatchObject({ name: 'web_search', parallelSafe: true });
  });

  it('defaults to 5 results and refuses bad arguments with a clear observation', async () => {
    const many = engine('many', () => hits(...Array.from({ length: 30 }, (_, i) => `https://e.example/${i}`)));
    const session = toolSession(createWebSearch({ engines: [many], ...fast, maxResults: 10 }));
    expect((await session.call({ query: 'q' })).output).toContain('- Total results: 5');
    const bad = async (args: unknown) => (await session.call(args)).output;
    expect(await bad({ query: '   ' })).toMatch(/invalid arguments for web_search:[\s\S]*→ at query/);
    expect(await bad({ query: 'q', num_results: 11 })).toMatch(/Too big[\s\S]*→ at num_results/);
    expect(await bad({ query: 'q', lang: 'english' })).toMatch(/expected a language code such as "en"[\s\S]*→ at lang/);
    expect(await bad({ query: 'q', country: 'usa' })).toMatch(/two-letter country code[\s\S]*→ at country/);
    expect(many.calls).toBe(1);
  });

  it('is an error observation when every engine failed', async () => {
    const session = toolSession(createWebSearch({ engines: [engine('none', () => [])], ...fast, maxRetries: 0 }));
    expect(await session.call({ query: 'q' })).toEqual({
      isError: true,
      output: 'Error: All search engines failed:\n- none: no results',
    });
  });

  it('with fetch_content, adds the text of each page that could be read (at most 1000 characters shown)', async () => {
    const long = 'word '.repeat(400);
    const site = await serve((request, response) => {
      if (request.path === '/article')
        send(
          `<html><head><script>var tracking = 1;</script><style>p{}</style></head><body><nav>Home | About</nav><header>Site header</header><h1>Kyoto</h1><p>Temples and gardens.</p><footer>© 2026</footer></body></html>`,
        )(request, response);
      else if (request.path === '/long') send(`<p>${long}</p>`)(request, response);
      else send('<h1>Not Found</h1>', 'text/html', 404)(request, response);
    });
    const pages = engine('pages', () => hits(`${site.url}/article`, `${site.url}/missing`, `${site.url}/long`));
    const reachSite = { allowHosts: [new URL(site.url).host] };
    // Only a page that never answers reaches this limit (the next test has one).
    const patient = { contentTimeoutSec: 600 };
    const tool = createWebSearch({ engines: [pages], ...fast, ...reachSite, ...patient });
    const { output } = await toolSession(tool).call({ query: 'kyoto', fetch_content: true });
    const blocks = output.split('\n\n');
    expect(blocks[1]).toContain('   Content: Kyoto Temples and gardens.');
    expect(blocks[2]).not.toContain('Content:');
    const longContent = /Content: (.*)/.exec(blocks[3] ?? '')?.[1] ?? '';
    expect(longContent).toBe(`${long.slice(0, 1000).trim()}...`);

    const structured = await searchWeb('kyoto', {
      engines: [pages],
      ...fast,
      ...reachSite,
      ...patient,
      contentMaxChars: 100,
      fetchContent: true,
    });
    expect(structured.isOk() && structured.value.results[2]?.content).toBe(
      `${long.slice(0, 100)}\n…[cut: ${long.trim().length - 100} more characters]`,
    );
  });

  it('with fetch_content, gives up on a page that never answers at its time limit, and answers', async () => {
    // It never answers: any time limit is reached, however fast the machine.
    const site = await serve(() => {});
    const pages = engine('pages', () => hits(`${site.url}/slow`));
    const tool = createWebSearch({
      engines: [pages],
      ...fast,
      allowHosts: [new URL(site.url).host],
      contentTimeoutSec: 0.3,
    });
    const result = await toolSession(tool).call({ query: 'kyoto', fetch_content: true });
    expect(result.isError).toBe(false);
    expect(result.output.split('\n\n')[1]).toBe(`1. Page 1\n   URL: ${site.url}/slow`);
  });

  it('reads a recorded Google page end to end', async () => {
    const google = await serve(send(fixture('google.html')));
    const result = await searchWeb('node.js event loop', { engines: [googleEngine({ baseUrl: google.url })], ...fast });
    expect(result.isOk() && result.value.results.map((r) => r.title)).toEqual([
      'The Node.js Event Loop, Timers, and process.nextTick()',
      'The event loop - JavaScript | MDN',
      'Result 3',
      'Nodejs Event Loop - Stack Overflow',
    ]);
  });

  it('the built-in engines go to the real endpoints, through the transport the host gives', async () => {
    const asked: string[] = [];
    // A transport that goes nowhere: it notes where each engine would have gone.
    const nowhere: typeof fetch = async (input) => {
      asked.push(String(input));
      throw new Error('offline');
    };
    const result = await searchWeb('q', { ...fast, maxRetries: 0, braveApiKey: 'k', fetch: nowhere });
    expect(asked.map((url) => url.split('?')[0])).toEqual([
      'https://www.google.com/wml/search',
      'https://html.duckduckgo.com/html/',
      'https://www.baidu.com/s',
      'https://www.bing.com/search',
      'https://api.search.brave.com/res/v1/web/search',
    ]);
    expect(failureOf(result)).toMatchObject({ failures: [{ engine: 'google', reason: 'offline' }, {}, {}, {}, {}] });
    expect(builtInEngines({ searxngUrl: 'https://searx.example.org' }).map((e) => e.name)).toEqual([
      'google',
      'baidu',
      'duckduckgo',
      'bing',
      'searxng',
    ]);
  });
});
