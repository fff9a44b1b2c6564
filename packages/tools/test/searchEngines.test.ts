import { describe, expect, it } from 'vitest';
import { baiduEngine } from '../src/search/baidu.js';
import { bingEngine } from '../src/search/bing.js';
import { braveEngine } from '../src/search/brave.js';
import { duckDuckGoEngine } from '../src/search/duckduckgo.js';
import { googleEngine } from '../src/search/google.js';
import { searxngEngine } from '../src/search/searxng.js';
import { engineQuery, fixture, send, serversPerTest } from './webServer.js';

const { serve } = serversPerTest();

describe('google, from its recorded result page', () => {
  it('reads title, unwrapped URL and description; drops blocks without a link; sends language and country', async () => {
    const { url, requests } = await serve(send(fixture('google.html'), 'application/xhtml+xml; charset=UTF-8'));
    const hits = await googleEngine({ baseUrl: url }).search(
      'node.js event loop',
      engineQuery({ numResults: 5, lang: 'de', country: 'AT' }),
    );
    expect(hits.map((hit) => hit.url)).toEqual([
      'https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick',
      'https://developer.mozilla.org/en-US/docs/Web/JavaScript/Event_loop',
      'https://www.geeksforgeeks.org/node-js/node-js-event-loop/',
      'https://stackoverflow.com/questions/10680601/nodejs-event-loop',
      'https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick',
    ]);
    expect(hits[0]).toEqual({
      title: 'The Node.js Event Loop, Timers, and process.nextTick()',
      url: 'https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick',
      description: expect.stringMatching(/^The event loop is what allows Node\.js to perform non-blocking I\/O/),
    });
    expect(hits[1]?.description).toContain('runtime model based on an event loop, which');
    // The third block has no title span: the cascade names it "Result 3".
    expect(hits[2]?.title).toBe('');
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.path).toBe('/wml/search');
    expect(Object.fromEntries(request?.query ?? [])).toMatchObject({
      q: 'node.js event loop',
      hl: 'de',
      lr: 'lang_de',
      gl: 'at',
    });
    expect(request?.headers['user-agent']).toMatch(/^Nokia/);
  });

  it('asks for the next page (start=10) when the first has too few, and stops when a page brings nothing new', async () => {
    const { url, requests } = await serve(send(fixture('google.html')));
    const hits = await googleEngine({ baseUrl: url }).search('q', engineQuery({ numResults: 12 }));
    expect(hits).toHaveLength(5);
    expect(requests.map((request) => request.query.get('start'))).toEqual([null, '10']);
  });

  it('says so when Google answers with its CAPTCHA page', async () => {
    const { url } = await serve((request, response) => {
      if (request.path === '/wml/search') response.writeHead(302, { location: '/sorry/index?continue=x' }).end();
      else response.writeHead(429, { 'content-type': 'text/html' }).end('<html><body>unusual traffic</body></html>');
    });
    await expect(googleEngine({ baseUrl: url }).search('q', engineQuery())).rejects.toThrow(/CAPTCHA page/);
  });
});

describe('bing, from its recorded result pages', () => {
  it('reads organic results only, decodes its tracking links, drops the WEB label, pages with first=11', async () => {
    const { url, requests } = await serve((request, response) =>
      send(fixture(request.query.get('first') === '11' ? 'bing-page2.html' : 'bing-page1.html'))(request, response),
    );
    const hits = await bingEngine({ baseUrl: url }).search(
      'node.js event loop',
      engineQuery({ numResults: 12, lang: 'en', country: 'gb' }),
    );
    expect(hits).toHaveLength(12);
    expect(hits[0]).toEqual({
      title: 'The Node.js Event Loop',
      url: 'https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick',
      description:
        'The event loop is what allows Node.js to perform non-blocking I/O operations — despite the fact that a single JavaScript thread is used by default.',
    });
    expect(hits[2]?.url).toBe('https://www.geeksforgeeks.org/node-js/node-js-event-loop/');
    expect(hits.some((hit) => hit.title?.includes('Learn Node.js in 30 days'))).toBe(false);
    expect(hits.some((hit) => hit.title === 'What is the event loop?')).toBe(false);
    // Page two: two new results; its repeat of MDN is not counted twice.
    expect(hits.slice(10).map((hit) => hit.url)).toEqual([
      'https://nodejs.org/en/learn/asynchronous-work/dont-block-the-event-loop',
      'https://www.ibm.com/think/topics/node-js-event-loop',
    ]);
    expect(requests.map((request) => request.query.get('first'))).toEqual([null, '11']);
    expect(requests[0]?.query.get('mkt')).toBe('en-GB');
    expect(requests[0]?.headers['accept-language']).toMatch(/^en-GB/);
  });

  it('names the HTTP status when Bing refuses', async () => {
    const { url } = await serve(send('busy', 'text/plain', 503));
    await expect(bingEngine({ baseUrl: url }).search('q', engineQuery())).rejects.toThrow('Bing answered HTTP 503');
  });
});

describe('duckduckgo, from its recorded HTML page', () => {
  it('posts the query with the region, unwraps its redirect links and leaves out its ads', async () => {
    const { url, requests } = await serve(send(fixture('duckduckgo.html')));
    const hits = await duckDuckGoEngine({ baseUrl: url }).search(
      'rust ownership',
      engineQuery({ lang: 'de', country: 'DE' }),
    );
    expect(hits).toEqual([
      {
        title: 'What is Ownership? - The Rust Programming Language',
        url: 'https://doc.rust-lang.org/book/ch04-01-what-is-ownership.html',
        description:
          "Ownership is a set of rules that govern how a Rust program manages memory. All programs have to manage the way they use a computer's memory while running.",
      },
      {
        title: 'Rust - Ownership and Borrowing - GeeksforGeeks',
        url: 'https://www.geeksforgeeks.org/rust/rust-ownership-and-borrowing/',
        description: 'Memory management in Rust is done through ownership and borrowing, checked at compile time.',
      },
      {
        title: '',
        url: 'https://www.reddit.com/r/rust/comments/1b2c3d4/how_do_you_explain_ownership/',
        description: 'How do you explain ownership to newcomers?',
      },
      {
        title: 'What Is Ownership? - The Rust Programming Language (Brown University)',
        url: 'https://rust-book.cs.brown.edu/ch04-01-what-is-ownership.html',
        description: '',
      },
    ]);
    const [request] = requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/html/');
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({ q: 'rust ownership', b: '', kl: 'de-de' });
  });

  it('reports its bot check as a failure, not as "no results"', async () => {
    const { url } = await serve(send(fixture('duckduckgo-challenge.html')));
    await expect(duckDuckGoEngine({ baseUrl: url }).search('q', engineQuery())).rejects.toThrow(/bot check/);
  });
});

describe('baidu, from its recorded result page', () => {
  it('takes the target URL from mu (else its link), the abstract, and leaves promoted results out', async () => {
    const { url, requests } = await serve(send(fixture('baidu.html')));
    const hits = await baiduEngine({ baseUrl: url }).search('大语言模型', engineQuery({ numResults: 8 }));
    expect(hits.map((hit) => [hit.title, hit.url])).toEqual([
      [
        '大型语言模型 - 维基百科,自由的百科全书',
        'https://zh.wikipedia.org/wiki/%E5%A4%A7%E5%9E%8B%E8%AF%AD%E8%A8%80%E6%A8%A1%E5%9E%8B',
      ],
      ['大语言模型_百度百科', 'https://baike.baidu.com/item/%E5%A4%A7%E8%AF%AD%E8%A8%80%E6%A8%A1%E5%9E%8B/62884793'],
      ['大语言模型 - 知乎', 'https://www.zhihu.com/topic/27065427/intro'],
      ['一文读懂大语言模型的原理 - CSDN博客', 'http://www.baidu.com/link?url=Qm5Np2Lr8Tx4Kv9Wz1Yb3Hc6Jd0Fg7Sa'],
      ['GitHub - Hannibal046/Awesome-LLM', 'https://github.com/Hannibal046/Awesome-LLM'],
    ]);
    expect(hits[0]?.description).toMatch(/^大型语言模型（英语：large language model，LLM）/);
    expect(hits[2]?.description).toBe('知乎话题：大语言模型的原理、训练与应用讨论。');
    expect(hits[4]?.description).toBe('');
    expect(Object.fromEntries(requests[0]?.query ?? [])).toMatchObject({ wd: '大语言模型', rn: '8' });
  });

  it('says so when Baidu sends its CAPTCHA', async () => {
    const { url } = await serve((request, response) => {
      if (request.path === '/s') response.writeHead(302, { location: '/static/captcha/tuxing.html?ak=x' }).end();
      else send('<html><body>安全验证</body></html>')(request, response);
    });
    await expect(baiduEngine({ baseUrl: url }).search('q', engineQuery())).rejects.toThrow(
      'Baidu answered with its CAPTCHA page',
    );
  });
});

describe('searxng, from its recorded JSON answer', () => {
  it('asks for JSON in the language and region, and turns its snippets into text', async () => {
    const { url, requests } = await serve(send(fixture('searxng.json'), 'application/json'));
    const hits = await searxngEngine({ baseUrl: `${url}/searx/` }).search(
      'openmanus agent',
      engineQuery({ lang: 'zh-CN', country: 'cn' }),
    );
    expect(hits[0]).toEqual({
      url: 'https://github.com/FoundationAgents/OpenManus',
      title: 'FoundationAgents/OpenManus: No fortress, purely open ground. OpenManus is Coming.',
      description:
        'OpenManus is an open-source framework for building general AI agents. No fortress, purely open ground.',
    });
    expect(hits[1]?.description).toBe('An open-source & community-driven agent framework.');
    expect(hits).toHaveLength(5);
    expect(requests[0]?.path).toBe('/searx/search');
    expect(Object.fromEntries(requests[0]?.query ?? [])).toMatchObject({
      q: 'openmanus agent',
      format: 'json',
      language: 'zh-CN',
    });
  });

  it('explains a 403: the instance does not allow the json format', async () => {
    const { url } = await serve(send('Forbidden', 'text/plain', 403));
    await expect(searxngEngine({ baseUrl: url }).search('q', engineQuery())).rejects.toThrow(/search\.formats/);
  });
});

describe('brave, from its recorded JSON answer', () => {
  it('sends the key, count, country and language, and strips the <strong> marks', async () => {
    const { url, requests } = await serve(send(fixture('brave.json'), 'application/json'));
    const hits = await braveEngine({ apiKey: 'brave-key', baseUrl: url }).search(
      'typescript zod',
      engineQuery({ numResults: 30 }),
    );
    expect(hits).toEqual([
      {
        url: 'https://zod.dev/',
        title: 'Zod | TypeScript-first schema validation',
        description: 'TypeScript-first schema validation with static type inference. Define a schema & parse data.',
      },
      {
        url: 'https://github.com/colinhacks/zod',
        title: 'GitHub - colinhacks/zod: TypeScript-first schema validation',
        description: 'TypeScript-first schema validation with static type inference, by @colinhacks.',
      },
      {
        url: 'https://www.npmjs.com/package/zod',
        title: 'zod - npm',
        description: 'Latest version: 4.1.12. Start using zod in your project by running `npm i zod`.',
      },
    ]);
    const [request] = requests;
    expect(request?.path).toBe('/res/v1/web/search');
    expect(request?.headers['x-subscription-token']).toBe('brave-key');
    expect(Object.fromEntries(request?.query ?? [])).toMatchObject({
      q: 'typescript zod',
      count: '20',
      country: 'US',
      search_lang: 'en',
    });
  });

  it("passes on the API's own explanation of a refusal", async () => {
    const body = JSON.stringify({
      type: 'ErrorResponse',
      error: {
        id: 'x',
        status: 401,
        code: 'SUBSCRIPTION_TOKEN_INVALID',
        detail: 'The provided subscription token is invalid.',
      },
    });
    const { url } = await serve(send(body, 'application/json', 401));
    await expect(braveEngine({ apiKey: 'wrong', baseUrl: url }).search('q', engineQuery())).rejects.toThrow(
      'Brave Search answered HTTP 401: The provided subscription token is invalid.',
    );
  });
});
