import { linkAbort } from '@openmanus/core/internal';
import { AddressRefusedError, type NetworkPolicy, PUBLIC_ONLY, urlRefusal } from './networkPolicy.js';
import { transportFor } from './transport.js';

/**
 * A desktop browser's User-Agent, sent under the `User-Agent` header: search engines and many
 * sites turn away clients that do not look like one.
 */
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0.0.0 Safari/537.36';

const MAX_REDIRECTS = 5;

export interface HttpRequest {
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface HttpLimits {
  readonly signal?: AbortSignal;
  /** For the whole exchange: redirects, headers and body. */
  readonly timeoutMs: number;
  /** Bytes of body read at most; the rest is never downloaded. */
  readonly maxBytes: number;
  /** Default {@link BROWSER_USER_AGENT}; a request's own `user-agent` header wins. */
  readonly userAgent?: string;
  /** The addresses the request, and each redirect, may reach (default {@link PUBLIC_ONLY}). */
  readonly network?: NetworkPolicy;
  /**
   * The transport (default undici's `fetch`, its connections checked against `network`), e.g. one
   * that goes through a proxy. A transport of your own resolves names itself: only IP addresses in
   * URLs are checked then.
   */
  readonly fetch?: typeof globalThis.fetch;
  /** Whether to read the body of a response with this media type (default: always). */
  readonly readBody?: (mediaType: string) => boolean;
}

/** A response, its body read as text within the limits. */
export interface HttpPage {
  /** Where it came from, after redirects. */
  readonly url: string;
  readonly status: number;
  readonly statusText: string;
  /** The media type, lowercased, without parameters (`text/html`); '' when the server named none. */
  readonly mediaType: string;
  /** The body as text; '' when it was not read (see `readBody`). */
  readonly text: string;
  /** The body was longer than `maxBytes` and was cut there. */
  readonly truncated: boolean;
}

export const isHttpUrl = (url: URL): boolean => url.protocol === 'http:' || url.protocol === 'https:';

/** The URL, if it is an absolute http(s) URL; the reason otherwise. */
export function parseHttpUrl(text: string): { url: URL } | { reason: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { reason: `not a valid absolute URL: ${JSON.stringify(text)}` };
  }
  return isHttpUrl(url)
    ? { url }
    : { reason: `only http:// and https:// URLs can be fetched, not ${url.protocol} (${url.href})` };
}

/**
 * One HTTP exchange with the limits an untrusted URL needs: http(s) only and only the addresses
 * `network` allows, on every redirect too (followed here, at most 5); a time limit for the whole
 * exchange; a body read only up to `maxBytes`. Throws an Error saying what went wrong (an
 * AddressRefusedError for an address it may not reach).
 */
export async function httpRequest(target: string, request: HttpRequest, limits: HttpLimits): Promise<HttpPage> {
  const parsed = parseHttpUrl(target);
  if ('reason' in parsed) throw new Error(parsed.reason);
  const link = linkAbort(limits.signal, limits.timeoutMs);
  try {
    return await exchange(parsed.url, request, limits, link.signal);
  } catch (error) {
    if (link.timedOut()) throw new Error(`timed out after ${limits.timeoutMs / 1000} s`);
    if (limits.signal?.aborted) throw new Error('cancelled');
    throw refusalIn(error) ?? new Error(describeFailure(error));
  } finally {
    link.dispose();
  }
}

async function exchange(start: URL, request: HttpRequest, limits: HttpLimits, signal: AbortSignal): Promise<HttpPage> {
  const network = limits.network ?? PUBLIC_ONLY;
  const transport = limits.fetch ?? (await transportFor(network));
  let url = start;
  let { method = 'GET', body } = request;
  let extraHeaders = request.headers ?? {};
  for (let redirects = 0; ; redirects++) {
    const refused = urlRefusal(url, network);
    if (refused) throw refused;
    const headers = new Headers(extraHeaders);
    if (!headers.has('user-agent')) headers.set('user-agent', limits.userAgent ?? BROWSER_USER_AGENT);
    const response = await transport(url, {
      method,
      headers,
      redirect: 'manual',
      signal,
      ...(body !== undefined ? { body } : {}),
    });
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      if (redirects === MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
      const next = new URL(location, url);
      if (!isHttpUrl(next)) throw new Error(`redirected to ${next.href}, which is not an http(s) URL: refused`);
      // A key sent to one site is not handed to the next one.
      if (next.origin !== url.origin) extraHeaders = {};
      if (response.status === 303 || (method === 'POST' && response.status !== 307 && response.status !== 308)) {
        method = 'GET';
        body = undefined;
      }
      url = next;
      continue;
    }
    const contentType = response.headers.get('content-type') ?? '';
    const mediaType = (contentType.split(';')[0] ?? '').trim().toLowerCase();
    const base = { url: url.href, status: response.status, statusText: response.statusText, mediaType };
    if (limits.readBody && !limits.readBody(mediaType)) {
      await response.body?.cancel();
      return { ...base, text: '', truncated: false };
    }
    const { bytes, truncated } = await readCapped(response.body, limits.maxBytes);
    return { ...base, text: decode(bytes, contentType, mediaType), truncated };
  }
}

/** Reads at most `maxBytes` of the body, then stops the download. */
async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number) {
  const chunks: Uint8Array[] = [];
  if (!body) return { bytes: Buffer.alloc(0), truncated: false };
  const reader = body.getReader();
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks), truncated: false };
    const room = maxBytes - size;
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room));
      await reader.cancel();
      return { bytes: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
}

/** The charset the header names, else the one an HTML page declares near its start, else UTF-8. */
function decode(bytes: Buffer, contentType: string, mediaType: string): string {
  const declared =
    /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1] ??
    (mediaType.includes('html')
      ? /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(bytes.toString('latin1', 0, 1024))?.[1]
      : undefined);
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(bytes);
  } catch {
    // A charset nobody knows: UTF-8 is the best guess.
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** The refusal, when the exchange failed on one (fetch hides it in `cause`). */
function refusalIn(error: unknown): AddressRefusedError | undefined {
  if (error instanceof AddressRefusedError) return error;
  return error instanceof Error && error.cause instanceof AddressRefusedError ? error.cause : undefined;
}

/** fetch says "fetch failed" and hides why in `cause`. */
function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  if (error.message === 'fetch failed' && cause) return `could not connect: ${cause.code ?? cause.message}`;
  return error.message;
}
