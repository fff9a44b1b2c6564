import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { AddressRefusedError, hostAllowed, type NetworkPolicy, refusalFor } from './networkPolicy.js';
import type { Resolver } from './transport.js';

/** The port rules of `ws:` and `wss:` are those of `http:` and `https:`. */
const WEB_PROTOCOL: Readonly<Record<string, string>> = { 'ws:': 'http:', 'wss:': 'https:' };

/**
 * The refusal for a request to `url` under the policy, for a client that makes its connections
 * itself (a browser): the host's addresses are looked up here and each one checked. What the
 * client then connects to comes from its own lookup, so a name that answers differently the two
 * times (DNS rebinding) can still slip through; a transport of this package checks the address it
 * connects to instead. A name that does not resolve here is refused: the client could resolve it
 * otherwise (its own resolver, its own rules), and nothing checked would be what it reaches.
 */
export async function addressRefusal(
  url: URL,
  policy: NetworkPolicy,
  resolve: Resolver = dnsLookup,
): Promise<AddressRefusedError | undefined> {
  const protocol = WEB_PROTOCOL[url.protocol] ?? url.protocol;
  if (policy.allowPrivateNetwork || hostAllowed(policy, url.hostname, protocol, url.port)) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) return refusalFor(host, host);
  const addresses = await new Promise<readonly { address: string }[]>((done) =>
    resolve(host, { all: true }, (error, found) => done(error ? [] : found)),
  );
  if (addresses.length === 0) return new AddressRefusedError(host, host, 'a name that does not resolve here');
  return addresses.map(({ address }) => refusalFor(host, address)).find((refused) => refused !== undefined);
}
