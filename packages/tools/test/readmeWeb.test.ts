// The README's web_search and web_fetch snippets, and the site's toolbox guide's snippet, run as
// written against recorded pages on 127.0.0.1 and a scripted model.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startOpenAiServer } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markdownOf, readmeOf, snippetRunner } from '../../core/test/readmeCheck.js';
import { fixture, send, startWebServer, type WebServer } from './webServer.js';

const article = await readFile(join(import.meta.dirname, 'fixtures', 'web', 'article.html'), 'utf8');
const packageDir = join(import.meta.dirname, '..');
const { blocks } = await readmeOf(packageDir);
const toolbox = await markdownOf(
  join(packageDir, '..', '..', 'docs', 'src', 'content', 'docs', 'guides', 'toolbox.md'),
);
const runSnippet = snippetRunner(packageDir);

// The snippets name the real engines and sites; this test sends them to recorded pages on
// 127.0.0.1 instead, and the model to a scripted server. The web tools fetch with undici: a
// preload hands the package an undici whose fetch goes to the recorded pages, as if they were the
// public sites (the sites' names still pass the tools' own checks; the connections, to
// 127.0.0.1, are not the tools' to check here).
const redirect = `
import { register } from 'node:module';
const shim = new URL('./undici.mjs', import.meta.url).href;
register('data:text/javascript,' + encodeURIComponent(
  'export async function resolve(specifier, context, next) {' +
  '  if (specifier === "undici" && context.parentURL !== ' + JSON.stringify(shim) + ') return { url: ' + JSON.stringify(shim) + ', shortCircuit: true };' +
  '  return next(specifier, context);' +
  '}'
));
`;
const undiciToFixtures = `
import undici from 'undici';
export * from 'undici';
const target = new URL(process.env.WEB_FIXTURES);
export const fetch = (input, { dispatcher, ...init } = {}) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.hostname !== '127.0.0.1') { url.protocol = 'http:'; url.host = target.host; }
  return undici.fetch(url, init);
};
`;

let web: WebServer;
beforeAll(async () => {
  web = await startWebServer((request, response) => {
    if (request.path === '/wml/search') return send(fixture('google.html'))(request, response);
    send(article)(request, response);
  });
});
afterAll(() => web.close());

/** Runs a snippet with the public sites it names served from the recorded pages. */
async function runOnFixtures(code: string, env: Record<string, string> = {}) {
  const { stdout } = await runSnippet(code, {
    files: { 'redirect.mjs': redirect, 'undici.mjs': undiciToFixtures },
    nodeArgs: ['--import', './redirect.mjs'],
    env: { WEB_FIXTURES: web.url, ...env },
  });
  return stdout;
}

describe('the web_search and web_fetch README snippets', () => {
  it('need the built package', () => {
    expect(existsSync(join(packageDir, 'dist', 'index.js')), 'run pnpm -C packages/tools build').toBe(true);
  });

  it('Manus with web_search and web_fetch, configured from the environment, searches, reads and answers', async () => {
    const [manus] = blocks('## `web_search`', 'ts');
    const model = await startOpenAiServer({
      script: [
        { toolCalls: [{ name: 'web_search', arguments: { query: 'Saihō-ji opening hours' } }] },
        { toolCalls: [{ name: 'web_fetch', arguments: { urls: 'https://saihoji-kokedera.com/en/' } }] },
        { content: 'Saihō-ji is open 9:00–17:00, by reservation.' },
      ],
    });
    try {
      const stdout = await runOnFixtures(manus ?? '', { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: model.baseURL });
      expect(stdout).toBe('Saihō-ji is open 9:00–17:00, by reservation.\n');
      const observations = model.requests.at(-1)?.messages.filter((message) => message.role === 'tool');
      expect(observations?.[0]?.content).toMatch(/^Search results for 'Saihō-ji opening hours':/);
      expect(observations?.[1]?.content).toContain('Opening hours: 9:00–17:00');
      model.assertConsumed();
    } finally {
      await model.close();
    }
  });

  it('searchWeb prints the results and the engine', async () => {
    const [, search] = blocks('## `web_search`', 'ts');
    expect(await runOnFixtures(search ?? '')).toBe(
      [
        'The Node.js Event Loop, Timers, and process.nextTick() — https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick',
        'The event loop - JavaScript | MDN — https://developer.mozilla.org/en-US/docs/Web/JavaScript/Event_loop',
        'Result 3 — https://www.geeksforgeeks.org/node-js/node-js-event-loop/',
        '(from google)',
        '',
      ].join('\n'),
    );
  });

  it('fetchWebPage prints the title and the Markdown', async () => {
    const [page] = blocks('## `web_fetch`', 'ts');
    const stdout = await runOnFixtures(page ?? '');
    expect(stdout).toMatch(/^Kyoto's Moss Gardens: A Visitor's Guide\n\nKyoto has more than a hundred moss gardens/);
    expect(stdout).toContain('![Moss at Gio-ji](https://en.wikipedia.org/images/gio-ji.jpg)');
  });
});

describe("the site's toolbox guide", () => {
  it('"Give Manus more tools": Manus with web_search and web_fetch searches, reads the page and answers', async () => {
    const [snippet, ...more] = toolbox.blocks('## Give Manus more tools', 'ts');
    expect(more).toEqual([]);
    const model = await startOpenAiServer({
      script: [
        { toolCalls: [{ name: 'web_search', arguments: { query: 'Saihō-ji opening hours' } }] },
        { toolCalls: [{ name: 'web_fetch', arguments: { urls: 'https://saihoji-kokedera.com/en/' } }] },
        { content: 'Saihō-ji is open 9:00–17:00, by reservation.' },
      ],
    });
    try {
      const stdout = await runOnFixtures(snippet ?? '', { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: model.baseURL });
      expect(stdout).toBe('Saihō-ji is open 9:00–17:00, by reservation.\n');
      const offered = (model.requests[0]?.tools ?? []) as { function: { name: string } }[];
      expect(offered.map((tool) => tool.function.name).sort()).toEqual(
        ['ask_human', 'python_execute', 'str_replace_editor', 'terminate', 'web_fetch', 'web_search'].sort(),
      );
      const observations = model.requests.at(-1)?.messages.filter((message) => message.role === 'tool');
      expect(observations?.[0]?.content).toMatch(/^Search results for 'Saihō-ji opening hours':\n\n1\. /);
      expect(observations?.[0]?.content).toContain('- Engine: google');
      expect(observations?.[1]?.content).toContain('Opening hours: 9:00–17:00');
      model.assertConsumed();
    } finally {
      await model.close();
    }
  });
});
