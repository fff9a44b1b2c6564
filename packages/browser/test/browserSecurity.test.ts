// A prompt-injected model and hostile pages: the browser reaches only public addresses (and what
// the options allow) — by URL, redirect, subresource, frame, WebSocket, beacon, a name that
// resolves to a private address, or one that changes its answer (DNS rebinding); it opens only
// http(s) URLs; downloads stay in the workspace and uploads come from it. Each test also shows the
// attack working where the defence is switched off on purpose, so it cannot pass by accident.

import { createSocket } from 'node:dgram';
import type { LookupAddress } from 'node:dns';
import { mkdir, mkdtemp, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Resolver } from '@openmanus/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS } from '../src/index.js';
import { browserHarness, chromePath, launchTestBrowser, refIn, testResolver } from './harness.js';
import { type Site, startServer } from './site.js';

const chrome = chromePath();

describe.skipIf(!chrome)('browser_use against a prompt-injected model and hostile pages', () => {
  const h = browserHarness(chrome ?? '');
  /** A service on this machine the browser must not reach (an admin API, a database's HTTP port). */
  let internal: Site;
  beforeAll(async () => {
    internal = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<title>Internal admin</title>secret');
      return true;
    });
  });
  afterAll(() => internal.close());

  const hostilePage = (target: string) => `${h.site.url}/hostile.html?target=${encodeURIComponent(target)}`;
  /** Opens the hostile page aimed at `target` and waits until each of its attempts has settled. */
  async function attack(run: Awaited<ReturnType<typeof h.run>>, target: string) {
    const before = internal.requests.length;
    await run.ok({ action: 'go_to_url', url: hostilePage(target) });
    await run.ok({ action: 'wait', text: 'attempts finished', seconds: 10 });
    return internal.requests.slice(before);
  }

  it('a page cannot make the browser reach a local service: not by fetch, image, frame, WebSocket or beacon', async () => {
    const guarded = await h.run();
    expect(await attack(guarded, `http://127.0.0.1:${internal.port}`)).toEqual([]);
    // The same page where the service is allowed on purpose: every attempt arrives.
    const open = await h.run(h.tool({ allowHosts: [h.site.host, internal.host] }));
    const reached = await attack(open, `http://127.0.0.1:${internal.port}`);
    expect([...reached].sort()).toEqual(['/beacon', '/fetch', '/frame', '/img', 'upgrade /ws']);
  });

  it('nor through a name that resolves to it', async () => {
    const guarded = await h.run();
    expect(await attack(guarded, `http://evil.test:${internal.port}`)).toEqual([]);
    const open = await h.run(h.tool({ allowHosts: [h.site.host, `evil.test:${internal.port}`] }));
    expect(await attack(open, `http://evil.test:${internal.port}`)).toContain('/fetch');
  });

  it('the model cannot open a local address, a name that resolves to one, or a redirect to one', async () => {
    const before = internal.requests.length;
    const run = await h.run();
    expect(await run.fails({ action: 'go_to_url', url: `http://127.0.0.1:${internal.port}/admin` })).toMatch(
      /^Error: go_to_url: http:\/\/127\.0\.0\.1:\d+\/admin was not opened: refused: 127\.0\.0\.1 is a loopback address; the web tools only reach public addresses \(set allowHosts or allowPrivateNetwork to change this\)/,
    );
    expect(await run.fails({ action: 'open_tab', url: `http://evil.test:${internal.port}/` })).toMatch(
      /refused: evil\.test resolves to 127\.0\.0\.1, which is a loopback address/,
    );
    expect(await run.fails({ action: 'go_to_url', url: 'http://[::1]:9/' })).toMatch(
      /refused: ::1 is a loopback address/,
    );
    const redirect = `${h.site.url}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${internal.port}/admin`)}`;
    expect(await run.fails({ action: 'go_to_url', url: redirect })).toMatch(
      /redirected to http:\/\/127\.0\.0\.1:\d+\/admin, which was not opened: refused: 127\.0\.0\.1 is a loopback address/,
    );
    expect(internal.requests.slice(before)).toEqual([]);
    // The redirect itself works when its target is allowed.
    const allowed = await h.run(h.tool({ allowHosts: [h.site.host, internal.host] }));
    expect(await allowed.ok({ action: 'go_to_url', url: redirect })).toContain('Title: Internal admin');
    expect(internal.requests.slice(before)).toContain('/admin');
  });

  it('checks the address each connection goes to, so a name that changes its answer (DNS rebinding) is refused', async () => {
    const before = internal.requests.length;
    let lookups = 0;
    // Public the first time (when the URL is checked), loopback after (when the browser connects).
    const rebinding: Resolver = (hostname, options, callback) => {
      if (hostname !== 'rebind.test') return testResolver(hostname, options, callback);
      const address = lookups++ === 0 ? '93.184.215.14' : '127.0.0.1';
      callback(null, [{ address, family: 4 } satisfies LookupAddress]);
    };
    const run = await h.run(h.tool({ resolve: rebinding }));
    const result = await run.call({ action: 'go_to_url', url: `http://rebind.test:${internal.port}/admin` });
    expect(result.output).toContain('rebind.test resolves to 127.0.0.1, which is a loopback address');
    expect(lookups).toBeGreaterThanOrEqual(2);
    expect(internal.requests.slice(before)).toEqual([]);
  });

  it('opens only http(s) URLs: no file:, javascript:, data: or chrome: pages', async () => {
    const run = await h.run();
    for (const url of [
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,<h1>x</h1>',
      'chrome://settings/',
    ]) {
      expect(await run.fails({ action: 'go_to_url', url }), url).toMatch(
        /only http:\/\/ and https:\/\/ URLs can be opened, not /,
      );
      expect(await run.fails({ action: 'open_tab', url }), url).toMatch(/only http:\/\/ and https:\/\//);
    }
    expect(await run.fails({ action: 'go_to_url', url: 'not a url' })).toMatch(/"not a url" is not an absolute URL/);
  });

  it('saves downloads only inside the workspace: a downloads folder linked elsewhere is not followed', async () => {
    const outside = await realpath(await mkdtemp(join(tmpdir(), 'openmanus-outside-')));
    try {
      const run = await h.run();
      await symlink(outside, join(run.workspace, 'downloads'));
      const state = await run.ok({ action: 'go_to_url', url: `${h.site.url}/` });
      const clicked = await run.ok({ action: 'click_element', ref: refIn(state, 'Download report') });
      expect(clicked).toMatch(/the download of report\.csv failed: .*outside the workspace/);
      expect(await readdir(outside)).toEqual([]);
      // A real folder works.
      await rm(join(run.workspace, 'downloads'));
      await mkdir(join(run.workspace, 'downloads'));
      expect(await run.ok({ action: 'click_element', ref: refIn(state, 'Download report') })).toContain(
        '→ downloads/report.csv',
      );
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('uploads only files inside the workspace: absolute paths elsewhere, .. and links out are refused', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: `${h.site.url}/selects.html` });
    const input = refIn(state, 'Attachment');
    expect(await run.fails({ action: 'upload_file', ref: input, path: '/etc/hostname' })).toMatch(
      /^Error: upload_file: The path \/etc\/hostname is outside the workspace/,
    );
    expect(await run.fails({ action: 'upload_file', ref: input, path: '../../etc/hostname' })).toMatch(
      /is outside the workspace/,
    );
    await symlink('/etc/hostname', join(run.workspace, 'link.txt'));
    expect(await run.fails({ action: 'upload_file', ref: input, path: 'link.txt' })).toMatch(
      /outside the workspace|symbolic link/,
    );
    expect(await run.fails({ action: 'upload_file', ref: input, path: 'missing.txt' })).toMatch(
      /the file missing\.txt does not exist/,
    );
    await writeFile(join(run.workspace, 'ok.txt'), 'fine');
    expect(await run.ok({ action: 'upload_file', ref: input, path: join(run.workspace, 'ok.txt') })).toContain(
      '"Uploaded ok.txt: fine"',
    );
  });

  it('behind a proxy of yours, URLs are checked as the browser asks for them', async () => {
    // A plain forwarding proxy, as a company's might be: it checks nothing itself.
    const proxy = createServer((request, response) => {
      const url = new URL(request.url ?? '');
      const upstream = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: request.method,
          headers: request.headers,
        },
        (reply) => {
          response.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(response);
        },
      );
      upstream.on('error', () => response.writeHead(502).end());
      request.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const server = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const run = await h.run(h.tool({ proxy: { server } }));
      const reached = await attack(run, `http://127.0.0.1:${internal.port}`);
      // The WebSocket goes to the proxy with CONNECT, which this one does not serve.
      expect(reached).toEqual([]);
      expect(await run.fails({ action: 'go_to_url', url: `http://127.0.0.1:${internal.port}/` })).toMatch(
        /refused: 127\.0\.0\.1 is a loopback address/,
      );
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });

  it('a page cannot make WebRTC send UDP to this machine: not to STUN or TURN servers, nor to ICE candidates it names', async () => {
    const socket = createSocket('udp4');
    const received: string[] = [];
    socket.on('message', (message, from) => received.push(`${from.address}:${from.port} ${message.length} bytes`));
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const page = `${h.site.url}/webrtc.html?port=${socket.address().port}`;
    try {
      const run = await h.run();
      await run.ok({ action: 'go_to_url', url: page });
      expect(await run.ok({ action: 'wait', text: 'ice finished', seconds: 20 })).toContain('ice finished');
      expect(received).toEqual([]);
      // The same page in a browser without the WebRTC switch: the packets arrive.
      const unguarded = CHROMIUM_ARGS.filter((flag) => !flag.includes('webrtc'));
      const arrived = new Promise((resolve) => socket.once('message', resolve));
      const browser = await launchTestBrowser(chrome ?? '', unguarded);
      try {
        const open = await h.run(h.tool({ browser }));
        await open.ok({ action: 'go_to_url', url: page });
        await arrived;
        expect(received.length).toBeGreaterThan(0);
      } finally {
        await browser.close();
      }
    } finally {
      socket.close();
    }
  });
});
