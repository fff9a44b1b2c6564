import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

// The same checks as @openmanus/server's (whose access module is not exported): a Host this server
// answers for, no Origin of another site's page, the bearer token.

/** Loopback names answer on any port: a page on another site can never make a browser send them (DNS rebinding sends its own name). */
export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'] as const;

const MIN_TOKEN_LENGTH = 16;

/** The token given (checked to be long enough), else a new one no one can guess: 256 random bits. */
export function tokenOf(given: string | undefined): string {
  if (given === undefined) return randomBytes(32).toString('base64url');
  const token = given.trim();
  if (token.length < MIN_TOKEN_LENGTH) throw new Error(`the token must be at least ${MIN_TOKEN_LENGTH} characters`);
  return token;
}

export interface AccessPolicy {
  readonly token: string;
  /** `Host` values accepted: `name:port`, or a bare name for any port. */
  readonly hosts: ReadonlySet<string>;
  /** `Origin`s of other sites' pages accepted. */
  readonly origins: ReadonlySet<string>;
  /** Whether a request needs no token (the agent card: it says how to authenticate). */
  readonly open: (request: Request) => boolean;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Constant-time: both sides are hashed to equal lengths first, so neither length nor content leaks. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

/** `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`. */
const nameOf = (host: string) => host.replace(/:\d+$/, '');

/**
 * Refuses, before any of the body is read, a request for a Host this server does not answer for
 * (421), from another site's page (403), or without the bearer token (401).
 */
export function accessCheck(policy: AccessPolicy) {
  return (request: Request, response: Response, next: NextFunction) => {
    const refuse = (status: number, error: string, headers: Record<string, string> = {}) =>
      response
        .status(status)
        .set({ connection: 'close', 'cache-control': 'no-store', ...headers })
        .json({ error });
    const host = request.headers.host?.toLowerCase() ?? '';
    if (!host || !(policy.hosts.has(host) || policy.hosts.has(nameOf(host))))
      return refuse(421, `this server does not answer for host ${host || '(none)'}`);
    const origin = request.headers.origin;
    const sameOrigin = origin === `http://${host}` || origin === `https://${host}`;
    if (origin !== undefined && !sameOrigin && !policy.origins.has(origin))
      return refuse(403, `requests from ${origin} are not allowed`);
    if (!policy.open(request) && !bearerMatches(request.headers.authorization, policy.token))
      return refuse(401, 'a valid bearer token is required', { 'www-authenticate': 'Bearer' });
    next();
  };
}
