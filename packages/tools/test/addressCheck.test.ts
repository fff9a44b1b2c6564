// addressRefusal: the check for clients that connect themselves (a browser), by URL.
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { addressRefusal, networkPolicy, type Resolver } from '../src/index.js';

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
