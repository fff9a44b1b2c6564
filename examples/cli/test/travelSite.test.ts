import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { type IncomingHttpHeaders, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DefaultTreeAdapterTypes, parse } from 'parse5';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTravelSite, type TravelSite, travelSiteRoot } from '../src/travelSite.js';
import { runNode, tempDir } from './helpers.js';

type Document = DefaultTreeAdapterTypes.Document;
type Element = DefaultTreeAdapterTypes.Element;
type ParentNode = DefaultTreeAdapterTypes.ParentNode;

interface Facts {
  sights: Record<string, { page: string; hours: string; fee: string; access: string }>;
  passes: Record<string, { page: string; price: string }>;
  events: Record<string, { page: string; when: string }>;
  emergency: Record<string, { page: string; number: string }>;
}

const factsPath = fileURLToPath(new URL('../demo/facts.json', import.meta.url));

/** Every file of the site, as a path relative to its root with `/` separators. */
async function siteFiles(root = travelSiteRoot): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

function* elementsOf(node: ParentNode): Generator<Element> {
  for (const child of node.childNodes) {
    if (!('tagName' in child)) continue;
    yield child;
    yield* elementsOf(child);
  }
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const attribute = (element: Element, name: string) => element.attrs.find((a) => a.name === name)?.value;

/** The text of a node as a reader sees it: entities decoded, whitespace collapsed. */
function textOf(node: ParentNode): string {
  const parts: string[] = [];
  const walk = (parent: ParentNode) => {
    for (const child of parent.childNodes) {
      if (child.nodeName === '#text') parts.push((child as DefaultTreeAdapterTypes.TextNode).value);
      else if ('childNodes' in child) walk(child);
    }
  };
  walk(node);
  return parts.join(' ').replace(/\s+/g, ' ').trim();
}

/** A raw request: the path goes out exactly as written (no normalising of `..`, no encoding). */
function get(
  site: TravelSite,
  path: string,
  method = 'GET',
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const { port } = new URL(site.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

let site: TravelSite;
let files: string[];
const pages = new Map<string, Document>();
const pageText = (file: string) => textOf(pages.get(file) ?? parse(''));

beforeAll(async () => {
  site = await startTravelSite();
  files = await siteFiles();
  for (const file of files.filter((f) => f.endsWith('.html'))) {
    pages.set(file, parse(await readFile(join(travelSiteRoot, file), 'utf8')));
  }
});
afterAll(() => site.close());

describe('the travel site server', () => {
  it('serves every page, byte for byte, as text/html on 127.0.0.1, under a same-origin-only policy', async () => {
    expect(site.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(pages.size).toBeGreaterThanOrEqual(12);
    for (const file of pages.keys()) {
      const { status, headers, body } = await get(site, `/${file}`);
      expect(status, file).toBe(200);
      expect(headers['content-type'], file).toBe('text/html; charset=utf-8');
      expect(headers['content-security-policy'], file).toContain("default-src 'self'");
      expect(body, file).toBe(await readFile(join(travelSiteRoot, file), 'utf8'));
    }
  });

  it('serves the stylesheet, the script and the icon with their content types', async () => {
    const types: Record<string, string> = {
      css: 'text/css; charset=utf-8',
      js: 'text/javascript; charset=utf-8',
      svg: 'image/svg+xml',
    };
    const assets = files.filter((file) => !file.endsWith('.html'));
    expect(assets).toEqual(['assets/site.js', 'assets/style.css', 'favicon.svg']);
    for (const file of assets) {
      const { status, headers, body } = await get(site, `/${file}`);
      expect(status, file).toBe(200);
      expect(headers['content-type'], file).toBe(types[file.split('.').pop() ?? '']);
      expect(headers['x-content-type-options'], file).toBe('nosniff');
      expect(body, file).toBe(await readFile(join(travelSiteRoot, file), 'utf8'));
    }
  });

  it('answers / with the home page and sends a directory without its slash to it', async () => {
    const home = await get(site, '/');
    expect(home.status).toBe(200);
    expect(home.body).toBe(await readFile(join(travelSiteRoot, 'index.html'), 'utf8'));
    expect(await get(site, '/sights')).toMatchObject({ status: 301, headers: { location: '/sights/' } });
    expect(await get(site, '/sights?from=home')).toMatchObject({ headers: { location: '/sights/?from=home' } });
    // The location is built from the file found, never from the request: `//sights` is no other host.
    expect(await get(site, '//sights')).toMatchObject({ status: 301, headers: { location: '/sights/' } });
    const list = await get(site, '/sights/');
    expect(list.status).toBe(200);
    expect(list.body).toBe(await readFile(join(travelSiteRoot, 'sights/index.html'), 'utf8'));
  });

  it('answers a missing page with the 404 page and status 404', async () => {
    const notFoundPage = await readFile(join(travelSiteRoot, '404.html'), 'utf8');
    for (const path of ['/no-such-page.html', '/sights/no/such/page', '/index.html/more', '/index.html/']) {
      const { status, headers, body } = await get(site, path);
      expect(status, path).toBe(404);
      expect(headers['content-type'], path).toBe('text/html; charset=utf-8');
      expect(body, path).toBe(notFoundPage);
    }
    expect(pageText('404.html')).toContain('Page not found');
  });

  it('answers HEAD without a body, and refuses other methods', async () => {
    const head = await get(site, '/index.html', 'HEAD');
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBe((await readFile(join(travelSiteRoot, 'index.html'))).length);
    expect(head.body).toBe('');
    const post = await get(site, '/index.html', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('refuses every path that leads out of the site, encoded or not', async () => {
    // facts.json lies just outside the site: a server that let `..` through would serve it.
    const outside = await readFile(factsPath, 'utf8');
    expect(outside).toContain('"passes"');
    for (const path of [
      '/../facts.json',
      '/sights/../../facts.json',
      '/%2e%2e/facts.json',
      '/.%2E/facts.json',
      '/..%2ffacts.json',
      '/sights/..%2F..%2Ffacts.json',
      '/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fetc/passwd',
    ]) {
      const { status, body } = await get(site, path);
      expect(status, path).toBe(403);
      expect(body, path).not.toContain('"passes"');
    }
  });

  it('refuses malformed paths', async () => {
    expect((await get(site, '/%E0%A4%A')).status).toBe(400);
    expect((await get(site, '/index.html%00.txt')).status).toBe(400);
    expect((await get(site, '*')).status).toBe(400);
  });

  it('never follows a symlink out of the directory it serves', async () => {
    const dir = await tempDir();
    const root = join(dir, 'site');
    await mkdir(root);
    await writeFile(join(dir, 'secret.html'), 'SECRET');
    await writeFile(join(root, 'index.html'), 'home');
    await symlink(join(dir, 'secret.html'), join(root, 'escape.html'));
    await symlink(dir, join(root, 'up'));
    await symlink('index.html', join(root, 'alias.html'));
    const local = await startTravelSite({ root });
    try {
      for (const path of ['/escape.html', '/up/secret.html']) {
        const { status, body } = await get(local, path);
        expect(status, path).toBe(403);
        expect(body, path).not.toContain('SECRET');
      }
      expect(await get(local, '/alias.html')).toMatchObject({ status: 200, body: 'home' });
      // Without a 404 page of its own, a plain 404.
      expect(await get(local, '/missing.html')).toMatchObject({ status: 404, body: '404 Not Found\n' });
    } finally {
      await local.close();
    }
  });

  it('close() ends open connections (a browser keeps some open, idle or half-sent) and stops listening', async () => {
    const local = await startTravelSite();
    const { port } = new URL(local.url);
    const sockets = await Promise.all(
      ['', 'GET / HTTP/1.1\r\n'].map(
        (sent) =>
          new Promise<Socket>((done, fail) => {
            const socket = connect(Number(port), '127.0.0.1', () => socket.write(sent, () => done(socket)));
            socket.on('error', fail);
          }),
      ),
    );
    const ended = sockets.map((socket) => new Promise((done) => socket.on('close', done)));
    await local.close();
    await Promise.all(ended);
    await expect(get(local, '/')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // Without closing them, Node drops such sockets only at its 60 s headers time-out (checked
    // every 30 s): 30 s is past any slow machine and short of that.
  }, 30_000);

  it('`pnpm travel-site` prints the URL and serves the site until Ctrl+C', async () => {
    let served = 0;
    const ran = await runNode('travelSite.js', [], {
      onStart: (child) => {
        let line = '';
        const onData = (chunk: string) => {
          line += chunk;
          if (!line.includes('\n')) return;
          child.stdout?.off('data', onData);
          fetch(line.trim())
            .then((response) => (served = response.status))
            .finally(() => child.kill('SIGINT'));
        };
        child.stdout?.on('data', onData);
      },
    });
    expect(ran.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\n$/);
    expect(served).toBe(200);
    expect(ran.code, ran.stderr).toBe(0);
  });
});

describe('the travel site pages', () => {
  it('reference nothing outside the site: no URL with a scheme, no //host link, no CSS import', async () => {
    // An SVG file must name its namespace; that URL is an identifier, never fetched.
    const svgNamespace = 'xmlns="http://www.w3.org/2000/svg"';
    for (const file of files) {
      const text = (await readFile(join(travelSiteRoot, file), 'utf8')).replaceAll(svgNamespace, '');
      expect(text.match(/[a-z][a-z\d+.-]*:\/\/[^\s"'<>)]*/gi) ?? [], file).toEqual([]);
      expect(text.match(/url\(|@import/g) ?? [], file).toEqual([]);
    }
    for (const [file, document] of pages) {
      for (const element of elementsOf(document)) {
        for (const { name, value } of element.attrs) {
          if (['href', 'src', 'action', 'srcset', 'poster', 'data', 'formaction'].includes(name)) {
            expect(value, `${file}: ${name}="${value}"`).not.toMatch(/^\s*([a-z][a-z\d+.-]*:|\/\/|\\\\)/i);
          }
        }
      }
    }
  });

  it('every link, script, stylesheet and form leads to a file of the site, and every #fragment to an element', () => {
    let checked = 0;
    for (const [file, document] of pages) {
      for (const element of elementsOf(document)) {
        const link = attribute(element, 'href') ?? attribute(element, 'src') ?? attribute(element, 'action');
        if (link === undefined) continue;
        const [path = '', fragment] = link.split('#');
        const bare = path.split('?')[0] ?? '';
        const target =
          bare === ''
            ? file
            : bare.startsWith('/')
              ? posix.normalize(bare.slice(1))
              : posix.join(posix.dirname(file), bare);
        expect(files, `${file}: ${link}`).toContain(target);
        if (fragment) {
          const ids = [...elementsOf(pages.get(target) ?? parse(''))].map((e) => attribute(e, 'id'));
          expect(ids, `${file}: ${link}`).toContain(fragment);
        }
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(150);
  });

  it('the printable map opens in a new tab from every page, without giving it a handle on its opener', () => {
    for (const [file, document] of pages) {
      const newTabs = [...elementsOf(document)].filter((e) => attribute(e, 'target') === '_blank');
      for (const link of newTabs) expect(attribute(link, 'rel'), file).toContain('noopener');
      expect(
        newTabs.map((link) => posix.normalize(attribute(link, 'href') ?? '').replace(/^(\.\.\/|\/)+/, '')),
        file,
      ).toContain('map.html');
    }
  });

  it("the home page's search box is a GET form for the results page", () => {
    const forms = [...elementsOf(pages.get('index.html') ?? parse(''))].filter((e) => e.tagName === 'form');
    expect(forms.map((form) => [attribute(form, 'action'), attribute(form, 'method')])).toEqual([
      ['search.html', 'get'],
    ]);
    const inputs = [...elementsOf(forms[0] ?? parse(''))].filter((e) => e.tagName === 'input');
    expect(inputs.map((input) => attribute(input, 'name'))).toEqual(['q']);
  });

  it("facts.json's facts are on the pages they describe, and the sights list agrees with the sight pages", async () => {
    const facts = JSON.parse(await readFile(factsPath, 'utf8')) as Facts;
    expect(Object.keys(facts.sights)).toHaveLength(5);
    for (const [name, { page, hours, fee, access }] of Object.entries(facts.sights)) {
      const text = pageText(page);
      for (const fact of [name, hours, fee, access]) expect(text, `${page}: ${fact}`).toContain(fact);
      const keyFacts = [...elementsOf(pages.get(page) ?? parse(''))].find((e) => attribute(e, 'class') === 'key-facts');
      expect(textOf(keyFacts ?? parse('')), page).toMatch(
        new RegExp(`^Opening hours ${escapeRegExp(hours)} .*Admission ${escapeRegExp(fee)} `),
      );

      const cards = [...elementsOf(pages.get('sights/index.html') ?? parse(''))].filter(
        (e) =>
          attribute(e, 'class') === 'card' &&
          [...elementsOf(e)].some((a) => attribute(a, 'href') === posix.relative('sights', page)),
      );
      expect(cards, name).toHaveLength(1);
      expect(textOf(cards[0] ?? parse('')), name).toMatch(
        new RegExp(`^${escapeRegExp(name)} .* Hours ${escapeRegExp(hours)} Admission ${escapeRegExp(fee)} `),
      );
    }

    const tableFacts: [string, { page: string }, string][] = [
      ...Object.entries(facts.passes).map(([name, f]) => [name, f, f.price] as [string, { page: string }, string]),
      ...Object.entries(facts.events).map(([name, f]) => [name, f, f.when] as [string, { page: string }, string]),
      ...Object.entries(facts.emergency).map(([name, f]) => [name, f, f.number] as [string, { page: string }, string]),
    ];
    expect(tableFacts).toHaveLength(11);
    for (const [name, { page }, value] of tableFacts) {
      const rows = [...elementsOf(pages.get(page) ?? parse(''))].filter((e) => e.tagName === 'tr');
      const row = rows.find((tr) => {
        const first = [...elementsOf(tr)].find((cell) => cell.tagName === 'th' || cell.tagName === 'td');
        return first !== undefined && textOf(first) === name;
      });
      expect(row, `${page}: the row of ${name}`).toBeDefined();
      const cells = [...elementsOf(row ?? parse(''))].filter((e) => e.tagName === 'td').map(textOf);
      expect(cells[0], `${page}: ${name}`).toBe(value);
    }
  });
});

/** Chrome or Chromium: CHROME_PATH, else the usual places (CI installs Debian's chromium). */
function chromePath(): string {
  const candidates = [
    process.env.CHROME_PATH,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
  ];
  const found = candidates.find((path) => path && existsSync(path));
  if (!found)
    throw new Error('No Chrome or Chromium found: install one (apt-get install chromium) or set CHROME_PATH.');
  return found;
}

describe('the travel site in a real browser', () => {
  it('asks for cookie consent first, then shows more sights, searches and opens the map in a new tab, all from 127.0.0.1', async () => {
    const browser = await chromium.launch({ executablePath: chromePath() });
    try {
      const context = await browser.newContext();
      context.setDefaultTimeout(5_000);
      const elsewhere: string[] = [];
      await context.route(
        (url) => !url.href.startsWith(site.url),
        (route) => {
          elsewhere.push(route.request().url());
          return route.abort();
        },
      );
      const problems: string[] = [];
      context.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
      });
      context.on('weberror', (error) => problems.push(error.error().message));

      const page = await context.newPage();
      await page.goto(site.url);
      const consent = page.getByRole('dialog', { name: 'Cookies on Kyoto Journeys' });
      await consent.waitFor();
      // The dialog covers the page: a click on the navigation would land on it.
      const nav = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Top sights' });
      const box = await nav.boundingBox();
      // (A string, since the tests are typed without the DOM.)
      const covered = await page.evaluate(
        `document.elementFromPoint(${(box?.x ?? 0) + 5}, ${(box?.y ?? 0) + 5})?.closest('.consent-backdrop') != null`,
      );
      expect(covered).toBe(true);
      await page.getByRole('button', { name: 'Necessary cookies only' }).click();
      await consent.waitFor({ state: 'detached' });
      expect((await context.cookies()).map((c) => `${c.name}=${c.value}`)).toEqual(['kyoto_consent=necessary']);

      // Answered once for the whole site.
      await nav.click();
      await page.waitForURL(`${site.url}sights/index.html`);
      expect(await page.locator('.consent-backdrop').count()).toBe(0);
      const nijo = page.getByRole('link', { name: 'Nijo Castle' });
      expect(await nijo.isVisible()).toBe(false);
      const more = page.getByRole('button', { name: 'Show 2 more sights' });
      await more.click();
      expect(await nijo.isVisible()).toBe(true);
      expect(await page.getByRole('link', { name: 'Ginkaku-ji' }).isVisible()).toBe(true);
      expect(await page.getByRole('button', { name: 'Show fewer' }).getAttribute('aria-expanded')).toBe('true');

      await page.goto(site.url);
      await page.getByRole('searchbox', { name: 'Search the guide' }).fill('temple');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.waitForURL(`${site.url}search.html?q=temple`);
      expect(await page.locator('#search-summary').textContent()).toBe('4 results for “temple”:');
      expect(await page.locator('#results li:visible a').allTextContents()).toEqual([
        'Top sights',
        'Kinkaku-ji',
        'Kiyomizu-dera',
        'Ginkaku-ji',
      ]);

      const [map] = await Promise.all([
        context.waitForEvent('page'),
        page.getByRole('link', { name: 'Printable map (opens in a new tab)' }).click(),
      ]);
      await map.waitForLoadState();
      expect(map.url()).toBe(`${site.url}map.html`);
      expect(await map.getByRole('heading', { level: 1 }).textContent()).toBe('Printable map of central Kyoto');
      expect(await map.getByRole('img', { name: 'Map of central Kyoto with the five top sights' }).isVisible()).toBe(
        true,
      );

      expect(elsewhere).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
