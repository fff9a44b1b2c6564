import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { AddressRefusedError, connectionPlan, type NetworkPolicy } from './networkPolicy.js';
import { checkedLookup, type Resolver, uncheckedLookup } from './transport.js';

// The network policy for clients that make their connections themselves (a browser, a proxy in
// front of one), by the URL or host they are about to reach.

/** The port rules of `ws:` and `wss:` are those of `http:` and `https:`. */
const WEB_PROTOCOL: Readonly<Record<string, string>> = { 'ws:': 'http:', 'wss:': 'https:' };

/** A host to connect to, as a URL has it (`hostname`, `protocol` with its colon, `port` or ''). */
export interface HostTarget {
  readonly hostname: string;
  readonly protocol: string;
  readonly port: string;
}

const planFor = (target: HostTarget, policy: NetworkPolicy) =>
  connectionPlan(policy, target.hostname, WEB_PROTOCOL[target.protocol] ?? target.protocol, target.port);

/**
 * The DNS lookup a socket to `target` must be opened with under the policy — one that refuses
 * addresses that are not public, unless the policy lets the host through — or the refusal when the
 * host is an IP address that may not be reached. The check is in the connection's own lookup, so a
 * name that answers a public address once and a private one the next time (DNS rebinding) is
 * refused the time it answers the private one.
 */
export function connectionLookup(
  target: HostTarget,
  policy: NetworkPolicy,
  resolve: Resolver = dnsLookup,
): LookupFunction | AddressRefusedError {
  const plan = planFor(target, policy);
  if (plan.kind === 'refused') return plan.error;
  return plan.kind === 'direct' ? uncheckedLookup(resolve) : checkedLookup(resolve);
}

/**
 * The refusal for a request to `url` under the policy, checked before a client that resolves names
 * itself makes it: the host's addresses are looked up here and each one checked. What the client
 * then connects to comes from its own lookup, so a name that answers differently the two times
 * (DNS rebinding) can slip through; {@link connectionLookup} closes that gap where the connection
 * is made here. A name that does not resolve here is refused: the client could resolve it
 * otherwise (its own resolver, its own rules), and nothing checked would be what it reaches.
 */
export async function addressRefusal(
  url: URL,
  policy: NetworkPolicy,
  resolve: Resolver = dnsLookup,
): Promise<AddressRefusedError | undefined> {
  const plan = planFor(url, policy);
  if (plan.kind !== 'checked') return plan.kind === 'refused' ? plan.error : undefined;
  // A public IP address: nothing to look up.
  if (isIP(url.hostname.replace(/^\[(.*)\]$/, '$1'))) return undefined;
  return new Promise((done) => {
    checkedLookup(resolve)(url.hostname, { all: true }, (error) => {
      if (error instanceof AddressRefusedError) done(error);
      else if (error) done(new AddressRefusedError(url.hostname, url.hostname, 'a name that does not resolve here'));
      else done(undefined);
    });
  });
}
