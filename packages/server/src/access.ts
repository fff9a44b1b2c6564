import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The bearer token every request must carry, and where it came from. */
export interface ServerToken {
  readonly value: string;
  /** The file it is kept in, when it was not given by the host. */
  readonly file?: string;
  /** Made by this start (print it once: nobody knows it yet). */
  readonly created: boolean;
}

const MIN_TOKEN_LENGTH = 16;

/**
 * The configured token, else the one kept in `<dataDir>/token` (0600), else a new random one
 * written there: a restart keeps it, and clients configured once stay valid.
 */
export async function resolveToken(dataDir: string, configured?: string): Promise<ServerToken> {
  if (configured !== undefined) {
    if (configured.trim().length < MIN_TOKEN_LENGTH)
      throw new Error(`the server's token must be at least ${MIN_TOKEN_LENGTH} characters`);
    return { value: configured.trim(), created: false };
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, 'token');
  const kept = await readKept(file);
  if (kept !== undefined) return { value: kept, file, created: false };
  const value = randomBytes(32).toString('base64url');
  // `wx`: never through a link someone planted, never over a token another start just wrote.
  const handle = await open(file, 'wx', 0o600).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST') return undefined;
    throw error;
  });
  if (!handle) return resolveToken(dataDir);
  try {
    await handle.writeFile(`${value}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { value, file, created: true };
}

async function readKept(file: string): Promise<string | undefined> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!info) return undefined;
  if (!info.isFile()) throw new Error(`${file} is not a regular file`);
  if ((info.mode & 0o077) !== 0)
    throw new Error(`${file} can be read by other users: chmod 600 it (or delete it to make a new token)`);
  const value = (await readFile(file, 'utf8')).trim();
  if (value.length < MIN_TOKEN_LENGTH) throw new Error(`${file} holds no usable token: delete it to make a new one`);
  return value;
}

/** Who may talk to the server. */
export interface AccessPolicy {
  /** The bearer token; absent when the host's `authorize` hook decides who asks instead. */
  readonly token?: string;
  /** `Host` values accepted: `name:port`, or a bare name for any port. */
  readonly hosts: ReadonlySet<string>;
  /** `Origin`s of other sites' pages accepted; a request from any other origin is refused. */
  readonly origins: ReadonlySet<string>;
}

export interface Refusal {
  readonly status: number;
  readonly error: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Loopback names answer on any port: a page on another site can never make a browser send them (DNS rebinding sends its own name). */
export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'] as const;

/** `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`. */
const nameOf = (host: string) => host.replace(/:\d+$/, '');

/**
 * Why a request is refused, before any of its body is read: a Host not this server's (DNS
 * rebinding), an Origin of another site's page, no valid bearer token, or a POST body that is
 * not JSON (a page can send text/plain without asking the browser's permission first). The
 * server's own page (its Origin is the Host asked for) may talk to it; `open` requests (the
 * studio's own files: no secret in them, no effect) need no token.
 */
export function refusalOf(request: Request, policy: AccessPolicy, open = false): Refusal | undefined {
  const host = request.headers.get('host')?.toLowerCase() ?? new URL(request.url).host.toLowerCase();
  if (!host || !(policy.hosts.has(host) || policy.hosts.has(nameOf(host))))
    return { status: 421, error: `this server does not answer for host ${host}` };
  const origin = request.headers.get('origin');
  if (origin !== null && !sameOrigin(origin, host) && !policy.origins.has(origin))
    return { status: 403, error: `requests from ${origin} are not allowed` };
  if (open) return undefined;
  if (policy.token !== undefined && !bearerMatches(request.headers.get('authorization'), policy.token))
    return { status: 401, error: 'a valid bearer token is required', headers: { 'www-authenticate': 'Bearer' } };
  if (request.method === 'POST' && mediaType(request.headers.get('content-type')) !== 'application/json')
    return { status: 415, error: 'the body must be application/json' };
  return undefined;
}

/** The page's own origin: the host it asked, over http or https (behind a TLS proxy). */
const sameOrigin = (origin: string, host: string) => origin === `http://${host}` || origin === `https://${host}`;

/** Constant-time: both sides are hashed to equal lengths first, so neither length nor content leaks. */
function bearerMatches(header: string | null, token: string): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  if (!match?.[1]) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]), digest(token));
}

const mediaType = (header: string | null) => header?.split(';')[0]?.trim().toLowerCase();
