import type { LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import { toolSession } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { createWebSearch, searchWeb } from '../src/search/webSearch.js';
import { PUBLIC_ONLY } from '../src/web/networkPolicy.js';
import { whyNotPublic } from '../src/web/publicAddress.js';
import { checkedLookup, type Resolver, transportFor } from '../src/web/transport.js';
import { createWebFetch, fetchWebPage } from '../src/webFetch.js';
import { failureOf, send, serversPerTest } from './webServer.js';

const { serve } = serversPerTest();
/** A local service a page should never reach: it records whether it was asked anything. */
const internalService = () => serve(send('{"secret": "internal"}', 'application/json'));
const hostOf = (url: string) => new URL(url).host;
const portOf = (url: string) => new URL(url).port;

/** A transport that records what it is asked and reaches nothing. */
function recordingTransport() {
  const asked: string[] = [];
  const fetch: typeof globalThis.fetch = async (input) => {
    asked.push(String(input));
    throw new Error('offline');
  };
  return { asked, fetch };
}

const LOOPBACK = 'is a loopback address';
const HINT = 'the web tools only reach public addresses (set allowHosts or allowPrivateNetwork to change this)';
const refusedText = (host: string, why: string) => `refused: ${host} ${why}; ${HINT}`;

describe('which addresses are public', () => {
  it('names why an address is not public; public addresses of both families pass', () => {
    expect(
      Object.fromEntries(
        [
          '127.0.0.1',
          '127.255.0.9',
          '::1',
          '::ffff:127.0.0.1',
          '::ffff:10.1.2.3',
          '10.0.0.1',
          '172.16.0.1',
          '172.31.255.255',
          '192.168.1.1',
          '100.64.0.1',
          '169.254.169.254',
          'fe80::1',
          'fc00::1',
          'fd12:3456::1',
          '0.0.0.0',
          '::',
          '224.0.0.251',
          'ff02::1',
          '255.255.255.255',
          '192.0.2.1',
          '64:ff9b::7f00:1',
          '::7f00:1',
          'localhost',
        ].map((address) => [address, whyNotPublic(address)]),
      ),
    ).toEqual({
      '127.0.0.1': 'a loopback address',
      '127.255.0.9': 'a loopback address',
      '::1': 'a loopback address',
      '::ffff:127.0.0.1': 'a loopback address',
      '::ffff:10.1.2.3': 'a private-network address',
      '10.0.0.1': 'a private-network address',
      '172.16.0.1': 'a private-network address',
      '172.31.255.255': 'a private-network address',
      '192.168.1.1': 'a private-network address',
      '100.64.0.1': 'a carrier-grade NAT address',
      '169.254.169.254': 'a link-local address (where cloud metadata services answer)',
      'fe80::1': 'a link-local address (where cloud metadata services answer)',
      'fc00::1': 'a unique-local (private) IPv6 address',
      'fd12:3456::1': 'a unique-local (private) IPv6 address',
      '0.0.0.0': 'an unspecified address (it reaches this machine)',
      '::': 'an unspecified address (it reaches this machine)',
      '224.0.0.251': 'a multicast address',
      'ff02::1': 'a multicast address',
      '255.255.255.255': 'the broadcast address',
      '192.0.2.1': 'a special-purpose address (reserved)',
      '64:ff9b::7f00:1': 'a special-purpose address (rfc6052)',
      '::7f00:1': 'an IPv6 address outside the public range 2000::/3',
      localhost: 'not an IP address',
    });
    for (const address of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(whyNotPublic(address), address).toBeUndefined();
    }
  });
});

describe('by default, web_fetch reaches only public addresses', () => {
  it('refuses a loopback address, and the service there is never asked', async () => {
    const internal = await internalService();
    const session = toolSession(createWebFetch());
    expect(await session.call({ urls: `${internal.url}/admin` })).toEqual({
      isError: true,
      output: `Error: # ${internal.url}/admin\nError: ${refusedText('127.0.0.1', LOOPBACK)}`,
    });
    expect(internal.requests).toHaveLength(0);
  });

  it('refuses the cloud metadata address before any connection is attempted', async () => {
    const metadata = 'http://169.254.169.254/latest/meta-data/iam/security-credentials/';
    const why = 'is a link-local address (where cloud metadata services answer)';
    // Through a transport that records what it is asked: it is asked nothing.
    const recording = recordingTransport();
    const refused = {
      fetchError: true,
      code: 'WEB_FETCH_FAILED',
      message: refusedText('169.254.169.254', why),
      cause: 'ADDRESS_REFUSED',
    };
    expect(failureOf(await fetchWebPage(metadata, { fetch: recording.fetch }))).toEqual(refused);
    expect(recording.asked).toEqual([]);
    // Through the default transport: a connection attempt would end in a failure to connect, or
    // the test's own time-out (the page's limit is longer).
    expect(failureOf(await fetchWebPage(metadata, { timeoutSec: 600 }))).toEqual(refused);
  });

  it('refuses an address of this machine in every form a URL normalises: decimal, hex, octal, short, IPv6, IPv4-mapped', async () => {
    const internal = await internalService();
    const port = portOf(internal.url);
    const refusals = await Promise.all(
      [
        `http://2130706433:${port}/`,
        `http://0x7f.1:${port}/`,
        `http://0x7f000001:${port}/`,
        `http://0177.0.0.1:${port}/`,
        `http://127.1:${port}/`,
        `http://[::1]:${port}/`,
        `http://[::ffff:127.0.0.1]:${port}/`,
        `http://[::ffff:7f00:1]:${port}/`,
        `http://0.0.0.0:${port}/`,
        `http://[::]:${port}/`,
      ].map(async (url) => {
        const page = await fetchWebPage(url, { timeoutSec: 600 });
        return page.isOk() ? `${url} was fetched` : page.error.message.replace(HINT, '…');
      }),
    );
    expect(refusals).toEqual([
      'refused: 127.0.0.1 is a loopback address; …',
      'refused: 127.0.0.1 is a loopback address; …',
      'refused: 127.0.0.1 is a loopback address; …',
      'refused: 127.0.0.1 is a loopback address; …',
      'refused: 127.0.0.1 is a loopback address; …',
      'refused: ::1 is a loopback address; …',
      'refused: ::ffff:7f00:1 is a loopback address; …',
      'refused: ::ffff:7f00:1 is a loopback address; …',
      'refused: 0.0.0.0 is an unspecified address (it reaches this machine); …',
      'refused: :: is an unspecified address (it reaches this machine); …',
    ]);
    expect(internal.requests).toHaveLength(0);
  });

  it('refuses addresses of private networks, link-local, multicast and broadcast, before asking the transport', async () => {
    const recording = recordingTransport();
    const refusals = await Promise.all(
      [
        'http://10.0.0.1/',
        'https://172.16.5.4/',
        'http://192.168.1.1:8080/',
        'http://100.64.0.1/',
        'http://[fd00::1]/',
        'http://[fe80::1]/',
        'http://224.0.0.1/',
        'http://255.255.255.255/',
      ].map(async (url) => {
        const page = await fetchWebPage(url, { fetch: recording.fetch });
        return page.isOk() ? `${url} was fetched` : page.error.message.replace(HINT, '…');
      }),
    );
    expect(refusals).toEqual([
      'refused: 10.0.0.1 is a private-network address; …',
      'refused: 172.16.5.4 is a private-network address; …',
      'refused: 192.168.1.1 is a private-network address; …',
      'refused: 100.64.0.1 is a carrier-grade NAT address; …',
      'refused: fd00::1 is a unique-local (private) IPv6 address; …',
      'refused: fe80::1 is a link-local address (where cloud metadata services answer); …',
      'refused: 224.0.0.1 is a multicast address; …',
      'refused: 255.255.255.255 is the broadcast address; …',
    ]);
    expect(recording.asked).toEqual([]);
  });

  it('refuses a name that resolves to a loopback address, when it connects', async () => {
    const internal = await internalService();
    // Allowing the address by number does not allow a name for it.
    const page = await fetchWebPage(`http://localhost:${portOf(internal.url)}/admin`, {
      allowHosts: [hostOf(internal.url)],
    });
    expect(failureOf(page)).toMatchObject({ code: 'WEB_FETCH_FAILED', cause: 'ADDRESS_REFUSED' });
    expect(!page.isOk() && page.error.message).toMatch(
      /^refused: localhost resolves to (127\.0\.0\.1|::1), which is a loopback address; the web tools only reach/,
    );
    expect(internal.requests).toHaveLength(0);
  });

  it('follows a redirect from an allowed site only where it may go: another local port is refused and never asked', async () => {
    const internal = await internalService();
    const port = portOf(internal.url);
    const site = await serve((request, response) => {
      const to: Record<string, string> = {
        '/to-literal': `${internal.url}/admin`,
        '/to-name': `http://localhost:${port}/admin`,
        '/to-decimal': `http://2130706433:${port}/admin`,
        '/to-metadata': 'http://169.254.169.254/latest/meta-data/',
        '/to-self': '/page',
      };
      const location = to[request.path];
      if (location) response.writeHead(302, { location }).end();
      else send('<title>Allowed</title><p>The page.</p>')(request, response);
    });
    const { output } = await toolSession(createWebFetch({ allowHosts: [hostOf(site.url)], timeoutSec: 600 })).call({
      urls: ['/to-literal', '/to-name', '/to-decimal', '/to-metadata', '/to-self'].map((path) => site.url + path),
    });
    const sections = output.split('\n\n---\n\n');
    expect(sections[0]).toBe(`# ${site.url}/to-literal\nError: ${refusedText('127.0.0.1', LOOPBACK)}`);
    expect(sections[1]).toMatch(/^# .*\/to-name\nError: refused: localhost resolves to (127\.0\.0\.1|::1), which is a/);
    expect(sections[2]).toBe(`# ${site.url}/to-decimal\nError: ${refusedText('127.0.0.1', LOOPBACK)}`);
    expect(sections[3]).toMatch(/^# .*\/to-metadata\nError: refused: 169\.254\.169\.254 is a link-local address/);
    expect(sections[4]).toMatch(/^# Allowed\nURL: .*\/page \(redirected from .*\/to-self\)/);
    expect(internal.requests).toHaveLength(0);
    expect(site.requests.map((request) => request.path).sort()).toEqual(
      ['/page', '/to-decimal', '/to-literal', '/to-metadata', '/to-name', '/to-self'].sort(),
    );
  });

  it('checks the connection itself, not only the URL: the transport alone refuses, before connecting', async () => {
    const internal = await internalService();
    const transport = await transportFor(PUBLIC_ONLY);
    for (const url of [`${internal.url}/admin`, `http://localhost:${portOf(internal.url)}/admin`]) {
      const failure = await transport(url).then(
        () => undefined,
        (error: Error) => error.cause,
      );
      expect(failure, url).toMatchObject({ name: 'AddressRefusedError', message: expect.stringMatching(/^refused: /) });
    }
    expect(internal.requests).toHaveLength(0);
  });

  it('checks every answer of every lookup, so a name that rebinds to a private address is refused then', async () => {
    const answers: LookupAddress[][] = [
      [{ address: '93.184.215.14', family: 4 }],
      [{ address: '127.0.0.1', family: 4 }],
      [
        { address: '93.184.215.14', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ],
    ];
    const rebinding: Resolver = (_hostname, _options, callback) => callback(null, answers.shift() ?? []);
    const lookup = promisify(checkedLookup(rebinding)) as unknown as (
      hostname: string,
      options: { all: true },
    ) => Promise<LookupAddress[]>;
    expect(await lookup('rebind.example', { all: true })).toEqual([{ address: '93.184.215.14', family: 4 }]);
    await expect(lookup('rebind.example', { all: true })).rejects.toThrow(
      refusedText('rebind.example', 'resolves to 127.0.0.1, which is a loopback address'),
    );
    await expect(lookup('rebind.example', { all: true })).rejects.toThrow(
      refusedText('rebind.example', 'resolves to 10.0.0.5, which is a private-network address'),
    );
  });
});

describe('opening the web tools to other addresses', () => {
  it('allowHosts lets the named host through, on the named port only, or on any port without one', async () => {
    const [a, b] = [await serve(send('page a', 'text/plain')), await serve(send('page b', 'text/plain'))];
    const text = async (url: string, allowHosts: string[]) => {
      const page = await fetchWebPage(url, { allowHosts });
      return page.isOk() ? page.value.text : page.error.message.replace(`; ${HINT}`, '');
    };
    expect(await text(a.url, [hostOf(a.url)])).toBe('page a');
    expect(await text(b.url, [hostOf(a.url)])).toBe(`refused: 127.0.0.1 ${LOOPBACK}`);
    expect([await text(a.url, ['127.0.0.1']), await text(b.url, ['127.0.0.1'])]).toEqual(['page a', 'page b']);
    // A name is allowed by its name, and then reaches whatever it resolves to.
    expect(await text(`http://localhost:${portOf(a.url)}/`, [`localhost:${portOf(a.url)}`])).toBe('page a');
    // Written any way a URL writes the same host.
    expect(await text(a.url, [`2130706433:${portOf(a.url)}`])).toBe('page a');
  });

  it('allowPrivateNetwork lets every address through', async () => {
    const internal = await internalService();
    const session = toolSession(createWebFetch({ allowPrivateNetwork: true }));
    const { output, isError } = await session.call({
      urls: [internal.url, `http://localhost:${portOf(internal.url)}/`],
    });
    expect(isError).toBe(false);
    expect(output.match(/"secret": "internal"/g)).toHaveLength(2);
  });

  it('a mistake in allowHosts throws when the tool is made, naming the entry', () => {
    for (const entry of [
      'http://intranet.example/',
      'intranet.example/wiki',
      '::1',
      'user@host',
      'a b',
      'host:99999',
    ]) {
      expect(() => createWebFetch({ allowHosts: [entry] })).toThrow(
        `web_fetch: allowHosts entry ${JSON.stringify(entry)} is not a host or host:port`,
      );
    }
    expect(() => createWebSearch({ allowHosts: ['::1'] })).toThrow('web_search: allowHosts entry "::1"');
  });
});

describe('web_search', () => {
  it("reaches the host's own engine on its network; fetch_content skips result pages it may not reach, saying why", async () => {
    const internal = await internalService();
    const site = await serve(send('<h1>Kyoto</h1><p>Temples and gardens.</p>'));
    const results = [
      { url: `${site.url}/kyoto`, title: 'Kyoto', content: 'A city' },
      { url: `${internal.url}/admin`, title: 'Internal', content: 'From a hostile page' },
      { url: 'http://169.254.169.254/latest/meta-data/', title: 'Metadata', content: 'Also' },
    ];
    // A SearXNG on 127.0.0.1 that nothing opted in: the host configured it.
    const searxng = await serve(send(JSON.stringify({ results }), 'application/json'));
    const options = {
      searxngUrl: searxng.url,
      engine: 'searxng',
      maxRetries: 0,
      contentTimeoutSec: 600,
      allowHosts: [hostOf(site.url)],
    };
    const { output } = await toolSession(createWebSearch(options)).call({ query: 'kyoto', fetch_content: true });
    const blocks = output.split('\n\n');
    expect(blocks[1]).toContain('   Content: Kyoto Temples and gardens.');
    expect(blocks[2]).toContain(`   Content: not fetched, ${refusedText('127.0.0.1', LOOPBACK)}`);
    expect(blocks[3]).toContain('   Content: not fetched, refused: 169.254.169.254 is a link-local address');
    expect(output).toContain('- Engine: searxng');

    const found = await searchWeb('kyoto', { ...options, fetchContent: true });
    expect(
      found.isOk() && found.value.results.map(({ content, contentRefused }) => ({ content, contentRefused })),
    ).toEqual([
      { content: 'Kyoto Temples and gardens.', contentRefused: undefined },
      { content: undefined, contentRefused: refusedText('127.0.0.1', LOOPBACK) },
      { content: undefined, contentRefused: expect.stringMatching(/^refused: 169\.254\.169\.254 is a link-local/) },
    ]);
    expect(searxng.requests).toHaveLength(2);
    expect(site.requests).toHaveLength(2);
    expect(internal.requests).toHaveLength(0);
  });
});
