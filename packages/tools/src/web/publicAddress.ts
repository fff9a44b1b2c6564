import ipaddr from 'ipaddr.js';

/** What each of ipaddr.js's special ranges is, in words. */
const RANGE_NAMES: Readonly<Record<string, string>> = {
  loopback: 'a loopback address',
  private: 'a private-network address',
  uniqueLocal: 'a unique-local (private) IPv6 address',
  linkLocal: 'a link-local address (where cloud metadata services answer)',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'an unspecified address (it reaches this machine)',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
};

/** Where public IPv6 addresses are; IANA has handed out nothing else. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * Why the IP address is not a public one (e.g. "a loopback address"), or undefined when it is:
 * every special-purpose range (RFC 6890 and after) counts as not public. An IPv4-mapped IPv6
 * address (`::ffff:127.0.0.1`) is the IPv4 address it carries.
 */
export function whyNotPublic(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const ip = ipaddr.process(address);
  const range = ip.range();
  if (range !== 'unicast') return RANGE_NAMES[range] ?? `a special-purpose address (${range})`;
  if (ip.kind() === 'ipv6' && !ip.match(GLOBAL_UNICAST)) return 'an IPv6 address outside the public range 2000::/3';
  return undefined;
}
