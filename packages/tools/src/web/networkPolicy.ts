import { isIP } from 'node:net';
import { hasErrorCode, OpenManusError } from '@openmanus/core';
import { allowedHostOf } from '@openmanus/core/internal';
import { whyNotPublic } from './publicAddress.js';

/**
 * Which addresses the web tools may reach beyond public ones. By default none: the URLs come from
 * the model and from pages, so a prompt-injected model or a hostile page could otherwise make them
 * reach services on this machine, on its network, or the cloud metadata endpoint.
 */
export interface NetworkAccess {
  /** Reach any address: loopback, private networks, link-local and the like too (default false). */
  readonly allowPrivateNetwork?: boolean;
  /**
   * Hosts that may be reached whatever address they have, written as in URLs: `host:port`
   * (`'intranet.example:8080'`, `'127.0.0.1:3000'`, `'[::1]:8080'`), or `host` for any port.
   * A redirect to another host or port is checked again.
   */
  readonly allowHosts?: readonly string[];
}

/** {@link NetworkAccess}, checked. */
export interface NetworkPolicy {
  readonly allowPrivateNetwork: boolean;
  /** `host` (any port) or `host:port`, the host as a URL writes it. */
  readonly allowHosts: ReadonlySet<string>;
}

/** The default: public addresses only. */
export const PUBLIC_ONLY: NetworkPolicy = { allowPrivateNetwork: false, allowHosts: new Set() };
/** Any address: for the host's own configuration, such as a search engine on its network. */
export const ANY_ADDRESS: NetworkPolicy = { allowPrivateNetwork: true, allowHosts: new Set() };

/** Checks the options; a mistake throws, naming the entry. `owner` names the tool in the message. */
export function networkPolicy(access: NetworkAccess, owner: string): NetworkPolicy {
  return {
    allowPrivateNetwork: access.allowPrivateNetwork ?? false,
    allowHosts: new Set((access.allowHosts ?? []).map((entry) => allowedHost(entry, owner))),
  };
}

function allowedHost(entry: string, owner: string): string {
  const host = allowedHostOf(entry);
  if (host === undefined) {
    throw new RangeError(
      `${owner}: allowHosts entry ${JSON.stringify(entry)} is not a host or host:port ` +
        `(e.g. "intranet.example:8080", "127.0.0.1:3000", "[::1]:8080")`,
    );
  }
  return host;
}

/** The port a connection for this URL protocol and port ('' for the default) goes to. */
const portOf = (protocol: string, port: string): number => Number(port) || (protocol === 'https:' ? 443 : 80);

/**
 * Whether the policy names this host and port. `hostname` as URLs have it, or an IPv6 address
 * without brackets (as connections get it).
 */
export function hostAllowed(policy: NetworkPolicy, hostname: string, protocol: string, port: string): boolean {
  const host = isIP(hostname) === 6 ? `[${hostname}]` : hostname;
  return policy.allowHosts.has(host) || policy.allowHosts.has(`${host}:${portOf(protocol, port)}`);
}

/** A connection to an address that is not public, refused before it was made. */
export class AddressRefusedError extends OpenManusError<'ADDRESS_REFUSED'> {
  static readonly codes = ['ADDRESS_REFUSED'] as const;
  override readonly name = 'AddressRefusedError';
  static override isInstance(value: unknown): value is AddressRefusedError {
    return hasErrorCode(value, AddressRefusedError.codes);
  }
  constructor(host: string, address: string, why: string) {
    super(
      'ADDRESS_REFUSED',
      `refused: ${host === address ? host : `${host} resolves to ${address}, which`} is ${why}; ` +
        'the web tools only reach public addresses (set allowHosts or allowPrivateNetwork to change this)',
    );
  }
}

/** The refusal for connecting to `address` on behalf of `host`, or undefined when the address is public. */
export function refusalFor(host: string, address: string): AddressRefusedError | undefined {
  const why = whyNotPublic(address);
  return why === undefined ? undefined : new AddressRefusedError(host, address, why);
}

/** How a connection to a host may be made under a policy. */
export type ConnectionPlan =
  /** The policy lets it through, whatever its addresses. */
  | { readonly kind: 'direct' }
  /** A name: each address it resolves to is checked by the lookup the connection itself makes. */
  | { readonly kind: 'checked' }
  /** An IP address that is not public (sockets do not look an IP address up: it is refused here). */
  | { readonly kind: 'refused'; readonly error: AddressRefusedError };

/** The plan for connecting to `hostname` (as URLs or connections write it) on this protocol and port. */
export function connectionPlan(
  policy: NetworkPolicy,
  hostname: string,
  protocol: string,
  port: string,
): ConnectionPlan {
  if (policy.allowPrivateNetwork || hostAllowed(policy, hostname, protocol, port)) return { kind: 'direct' };
  const address = hostname.replace(/^\[(.*)\]$/, '$1');
  const refused = isIP(address) ? refusalFor(address, address) : undefined;
  return refused ? { kind: 'refused', error: refused } : { kind: 'checked' };
}

/**
 * The refusal for a URL whose host is an IP address (in any of the forms URLs normalise, such as
 * `http://2130706433/`) that the policy does not let it reach. A name is checked where it is
 * resolved, when the connection is made.
 */
export function urlRefusal(url: URL, policy: NetworkPolicy): AddressRefusedError | undefined {
  const plan = connectionPlan(policy, url.hostname, url.protocol, url.port);
  return plan.kind === 'refused' ? plan.error : undefined;
}
