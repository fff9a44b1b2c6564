import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// Who may talk to one of our HTTP services (@openmanus/server, @openmanus/a2a): the checks every
// request passes before any of its body is read, whatever framework carries it.

/** Loopback names answer on any port: a page on another site can never make a browser send them (DNS rebinding sends its own name). */
export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'] as const;

/** The shortest token a host may give. */
export const MIN_TOKEN_LENGTH = 16;

/** A token no one can guess: 256 random bits. */
export const newToken = (): string => randomBytes(32).toString('base64url');

/** The token a host gave, trimmed, or an error saying it is too short. */
export function givenToken(given: string, whose = 'the token'): string {
  const token = given.trim();
  if (token.length < MIN_TOKEN_LENGTH) throw new Error(`${whose} must be at least ${MIN_TOKEN_LENGTH} characters`);
  return token;
}

/** Who may talk to the service. */
export interface AccessPolicy {
  /** The bearer token; absent when the host's own hook decides who asks instead. */
  readonly token?: string;
  /** `Host` values accepted: `name:port`, or a bare name for any port. */
  readonly hosts: ReadonlySet<string>;
  /** `Origin`s of other sites' pages accepted; a request from any other origin is refused. */
  readonly origins: ReadonlySet<string>;
}

/** A request as the checks read it (a fetch `Request`, an Express or Node one, adapted). */
export interface AccessRequest {
  readonly method: string;
  /** The `Host` asked for. */
  readonly host: string;
  header(name: 'origin' | 'authorization' | 'content-type'): string | undefined;
}

export interface Refusal {
  readonly status: number;
  readonly error: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`. */
const nameOf = (host: string) => host.replace(/:\d+$/, '');

/**
 * Why a request is refused, before any of its body is read: a Host not this service's (DNS
 * rebinding), an Origin of another site's page, no valid bearer token, or a POST body that is not
 * JSON (a page can send text/plain without asking the browser's permission first). The service's
 * own page (its Origin is the Host asked for) may talk to it; `open` requests (files with no secret
 * in them and no effect, an agent card) need no token.
 */
export function refusalOf(request: AccessRequest, policy: AccessPolicy, open = false): Refusal | undefined {
  const host = request.host.toLowerCase();
  if (!host || !(policy.hosts.has(host) || policy.hosts.has(nameOf(host))))
    return { status: 421, error: `this server does not answer for host ${host || '(none)'}` };
  const origin = request.header('origin');
  if (origin !== undefined && !sameOrigin(origin, host) && !policy.origins.has(origin))
    return { status: 403, error: `requests from ${origin} are not allowed` };
  if (open) return undefined;
  if (policy.token !== undefined && !bearerMatches(request.header('authorization'), policy.token))
    return { status: 401, error: 'a valid bearer token is required', headers: { 'www-authenticate': 'Bearer' } };
  if (request.method === 'POST' && mediaType(request.header('content-type')) !== 'application/json')
    return { status: 415, error: 'the body must be application/json' };
  return undefined;
}

/** The page's own origin: the host it asked, over http or https (behind a TLS proxy). */
const sameOrigin = (origin: string, host: string) => origin === `http://${host}` || origin === `https://${host}`;

/** Constant-time: both sides are hashed to equal lengths first, so neither length nor content leaks. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];
  if (!given) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

const mediaType = (header: string | undefined) => header?.split(';')[0]?.trim().toLowerCase();
