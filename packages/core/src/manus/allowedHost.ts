/**
 * An `allowHosts` entry (`[browser].allow_hosts`) as network policies compare it: `host` (any
 * port) or `host:port`, the host as a URL writes it; undefined when the entry is anything else (a
 * path, a query, a user, a scheme). Shared by the config check and the tools that enforce it.
 */
export function allowedHostOf(entry: string): string | undefined {
  // Nothing but a host and a port: no path, query, fragment or user.
  if (/[/\\?#@]/.test(entry)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${entry}`);
  } catch {
    return undefined;
  }
  // The URL drops a port that is the scheme's default; the entry keeps what it says.
  const port = /:(\d+)$/.exec(entry)?.[1];
  return port === undefined ? url.hostname : `${url.hostname}:${Number(port)}`;
}
