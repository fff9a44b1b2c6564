// addressRefusal and connectionLookup: the policy for clients that connect themselves (a browser, a proxy).
import type { LookupAddress } from 'node:dns';
import { connect, createServer, type LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addressRefusal, connectionLookup } from '../src/web/addressCheck.js';
import { networkPolicy } from '../src/web/networkPolicy.js';
import type { Resolver } from '../src/web/transport.js';

/** A resolver answering these addresses for every name (no DNS is asked). */
const answering =
  (...addresses: string[]): Resolver =>
  (_hostname, _options, callback) =>
    callback(
      null,
      addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
const failing: Resolver = (_hostname, _options, callback) =>
  callback(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), []);

const publicOnly = networkPolicy({}, 'test');

describe('addressRefusal', () => {
  it('refuses IP addresses that are not public, in the forms URLs write them, and passes public ones', async () => {
    for (const url of ['http://127.0.0.1:8080/', 'http://2130706433/', 'http://[::1]/', 'http://169.254.169.254/']) {
      expect((await addressRefusal(new URL(url), publicOnly, failing))?.message, url).toMatch(/^refused: /);
    }
    expect(await addressRefusal(new URL('https://93.184.215.14/'), publicOnly, failing)).toBeUndefined();
  });

  it('resolves a name and refuses it when any of its addresses is not public', async () => {
    const url = new URL('http://intranet.example/');
    expect((await addressRefusal(url, publicOnly, answering('93.184.215.14', '10.0.0.5')))?.message).toMatch(
      /^refused: intranet\.example resolves to 10\.0\.0\.5, which is a private-network address/,
    );
    expect(await addressRefusal(url, publicOnly, answering('93.184.215.14'))).toBeUndefined();
  });

  it('refuses a name that does not resolve here (the client might resolve it elsewhere)', async () => {
    expect((await addressRefusal(new URL('http://nowhere.invalid/'), publicOnly, failing))?.message).toMatch(
      /nowhere\.invalid is a name that does not resolve here/,
    );
  });

  it('lets through the hosts the policy names (ws: and wss: ports as http: and https:), or everything', async () => {
    const allowed = networkPolicy({ allowHosts: ['127.0.0.1:3000', 'intranet.example'] }, 'test');
    expect(await addressRefusal(new URL('http://127.0.0.1:3000/x'), allowed, failing)).toBeUndefined();
    expect(await addressRefusal(new URL('ws://127.0.0.1:3000/socket'), allowed, failing)).toBeUndefined();
    expect(await addressRefusal(new URL('http://127.0.0.1:3001/'), allowed, failing)).toBeDefined();
    expect(await addressRefusal(new URL('wss://intranet.example/'), allowed, answering('10.0.0.5'))).toBeUndefined();
    const open = networkPolicy({ allowPrivateNetwork: true }, 'test');
    expect(await addressRefusal(new URL('http://127.0.0.1/'), open, failing)).toBeUndefined();
  });
});

/** Connects to 127.0.0.1:`port` under the name `host`, resolved by `lookup`; the error's message, or 'connected'. */
async function connectVia(lookup: LookupFunction, port: number): Promise<string> {
  return new Promise((done) => {
    const socket = connect({ host: 'service.example', port, lookup });
    socket.on('connect', () => {
      socket.destroy();
      done('connected');
    });
    socket.on('error', (error) => done(error.message));
  });
}

describe('connectionLookup', () => {
  it('opens sockets only to public addresses: a name resolving to loopback is refused at connect time', async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const target = { hostname: 'service.example', protocol: 'http:', port: String(port) };
      const checked = connectionLookup(target, publicOnly, answering('127.0.0.1'));
      if (checked instanceof Error) throw checked;
      expect(await connectVia(checked, port)).toMatch(
        /^refused: service\.example resolves to 127\.0\.0\.1, which is a loopback/,
      );
      const allowed = networkPolicy({ allowHosts: [`service.example:${port}`] }, 'test');
      const direct = connectionLookup(target, allowed, answering('127.0.0.1'));
      if (direct instanceof Error) throw direct;
      expect(await connectVia(direct, port)).toBe('connected');
    } finally {
      server.close();
    }
  });

  it('refuses an IP address that is not public before any socket is made', () => {
    const refused = connectionLookup({ hostname: '[::1]', protocol: 'wss:', port: '' }, publicOnly);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/^refused: ::1 is a loopback address/);
  });
});
