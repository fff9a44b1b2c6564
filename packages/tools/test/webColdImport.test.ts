import { execFileSync } from 'node:child_process';
import { expect, it } from 'vitest';

const toolsDist = new URL('../dist/index.js', import.meta.url).href;

/** Every module URL a fresh process resolves while it runs `script` after importing the built package. */
function modulesResolvedBy(script: string): string[] {
  const probe = `
    import { register } from 'node:module';
    const resolved = new Set();
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (url) => resolved.add(url));
    port1.unref();
    register('data:text/javascript,' + encodeURIComponent(
      'let port; export function initialize(data) { port = data.port; }' +
      'export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }'
    ), { data: { port: port2 }, transferList: [port2] });
    const tools = await import(${JSON.stringify(toolsDist)});
    ${script}
    await new Promise((r) => setTimeout(r, 50));
    console.log(JSON.stringify([...resolved]));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8' }));
}

const parsers = (modules: string[]) =>
  modules.filter((m) => /[/\\]node_modules[/\\](linkedom|parse5|turndown|@mozilla[/\\]readability)[/\\]/.test(m));
const httpClient = (modules: string[]) => modules.filter((m) => /[/\\]node_modules[/\\]undici[/\\]/.test(m));

it('importing the package and making web_search and web_fetch loads no HTML parser or HTTP client; the first page loads the client, and the parsers only in its worker thread', () => {
  const cold = modulesResolvedBy('tools.createWebSearch(); tools.createWebFetch();');
  expect(cold.some((m) => m.endsWith('/dist/search/webSearch.js'))).toBe(true);
  expect(parsers(cold)).toEqual([]);
  expect(httpClient(cold)).toEqual([]);
  const warm = modulesResolvedBy(`
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>t</title><p>hi</p>'));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const host = '127.0.0.1:' + server.address().port;
    const page = await tools.fetchWebPage('http://' + host + '/', { allowHosts: [host] });
    if (page.isErr()) throw page.error;
    if (page.value.text !== 'hi') throw new Error('the page was not read: ' + page.value.text);
    server.close();
  `);
  expect(parsers(warm)).toEqual([]);
  expect(httpClient(warm)).not.toEqual([]);
});
