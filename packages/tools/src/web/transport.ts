import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { buildConnector as BuildConnector } from 'undici';
import { connectionPlan, type NetworkPolicy, refusalFor } from './networkPolicy.js';

type Fetch = typeof globalThis.fetch;

/** Resolves a name to all its addresses, as `dns.lookup` with `all: true` does. */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A DNS lookup for sockets that fails with an AddressRefusedError when the name has an address
 * that is not public. It is the lookup the connection itself uses, so what was checked is what is
 * connected to: a name that answers a public address once and a private one the next time (DNS
 * rebinding) is refused the time it answers the private one.
 */
export function checkedLookup(resolve: Resolver = dnsLookup): LookupFunction {
  return lookupWith(resolve, refusalFor);
}

/** A DNS lookup for sockets through `resolve`, every address passed (for hosts the policy lets through). */
export const uncheckedLookup = (resolve: Resolver = dnsLookup): LookupFunction => lookupWith(resolve, () => undefined);

function lookupWith(resolve: Resolver, refuse: (host: string, address: string) => Error | undefined): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const refused = addresses.map(({ address }) => refuse(hostname, address)).find((r) => r !== undefined);
      if (refused) return callback(refused, '');
      const [first] = addresses;
      if (options.all) callback(null, addresses);
      else if (first) callback(null, first.address, first.family);
      else callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
    });
  };
}

/**
 * Opens connections for an undici Agent: to the hosts the policy names as asked; to an IP address
 * only if it is public; to a name through {@link checkedLookup}.
 */
function checkedConnector(policy: NetworkPolicy, build: typeof BuildConnector): BuildConnector.connector {
  const direct = build({});
  const checked = build({ lookup: checkedLookup() });
  return (options, callback) => {
    const plan = connectionPlan(policy, options.hostname, options.protocol, options.port);
    if (plan.kind === 'refused') return callback(plan.error, null);
    (plan.kind === 'direct' ? direct : checked)(options, callback);
  };
}

let undici: Promise<typeof import('undici')> | undefined;
/** undici loads with the first request, not with the package. */
const loadUndici = () => {
  undici ??= import('undici');
  return undici;
};

/** One pool of checked connections per policy: a connection opened for one policy is never reused by another. */
const guarded = new Map<string, Promise<Fetch>>();

/**
 * The fetch for requests under this policy: undici's (the same undici builds its connections, so
 * the pair does not depend on the Node version's own), through connections checked as they are
 * opened unless the policy allows any address.
 */
export function transportFor(policy: NetworkPolicy): Promise<Fetch> {
  if (policy.allowPrivateNetwork) return loadUndici().then(({ fetch }) => fetch as unknown as Fetch);
  const key = [...policy.allowHosts].sort().join(' ');
  let transport = guarded.get(key);
  if (!transport) {
    transport = loadUndici().then(({ Agent, buildConnector, fetch }) => {
      const dispatcher = new Agent({ connect: checkedConnector(policy, buildConnector) });
      return ((input, init) => fetch(input as never, { ...init, dispatcher } as never)) as Fetch;
    });
    guarded.set(key, transport);
  }
  return transport;
}
