import { defineTool, err, messageOf, ok, type Result, ResultAsync, type Tool } from '@openmanus/core';
import { z } from 'zod';
import { httpRequest } from './web/http.js';
import { readableMarkdown } from './web/markdown.js';
import { type NetworkAccess, type NetworkPolicy, networkPolicy } from './web/networkPolicy.js';
import { cutText } from './web/text.js';
import { WebFetchError } from './web/webFetchError.js';
import { WorkerTimeoutError } from './web/workerJob.js';

export interface WebFetchOptions extends NetworkAccess {
  /** Seconds per page, redirects, body and making it Markdown included (default 20). */
  readonly timeoutSec?: number;
  /** Characters of each page's text returned; the rest is cut, with a marker (default 20000). */
  readonly maxChars?: number;
  /** Bytes read of each page (default 5 MB). */
  readonly maxBytes?: number;
  /** URLs one call may ask for (default 5). */
  readonly maxUrls?: number;
  /** Default: a desktop browser's. */
  readonly userAgent?: string;
  /**
   * The HTTP transport (default undici's `fetch`), e.g. one through a proxy. It resolves names
   * itself: only IP addresses in URLs are checked against the network options then.
   */
  readonly fetch?: typeof globalThis.fetch;
}

/** A fetched page, readable. */
export interface WebPage {
  /** Where it came from, after redirects. */
  readonly url: string;
  readonly mediaType: string;
  /** The HTML page's title ('' for other content). */
  readonly title: string;
  /** Markdown of an HTML page's main content; other text as it came. Cut to `maxChars`, with a marker. */
  readonly text: string;
  /** The page was longer than `maxBytes` and only its start was read. */
  readonly truncated: boolean;
}

const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;

const isHtml = (type: string) => type === 'text/html' || type === 'application/xhtml+xml';
/** What can be returned as it is: text of any kind, JSON, XML. */
const isText = (type: string) =>
  type.startsWith('text/') || /^application\/(.+\+)?(json|xml)$/.test(type) || type === 'application/javascript';

type FetchCall = WebFetchOptions & { readonly signal?: AbortSignal };

/**
 * One page as readable text: HTML as Markdown of its main content (title and links kept), text
 * and JSON as they are; other content (PDF, images, archives) is not downloaded, and the error
 * names its type. Only http(s) and public addresses unless the options allow others, on redirects
 * too. A mistake in the options throws; why a page was not read is the result's `WebFetchError`.
 */
export function fetchWebPage(url: string, options: FetchCall = {}): ResultAsync<WebPage, WebFetchError> {
  return new ResultAsync(readPage(url, options, networkPolicy(options, 'web_fetch')));
}

async function readPage(
  url: string,
  options: FetchCall,
  network: NetworkPolicy,
): Promise<Result<WebPage, WebFetchError>> {
  const maxChars = options.maxChars ?? 20_000;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = (options.timeoutSec ?? 20) * 1000;
  const deadline = Date.now() + timeoutMs;
  let page: Awaited<ReturnType<typeof httpRequest>>;
  try {
    page = await httpRequest(
      url,
      { headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5' } },
      {
        timeoutMs,
        maxBytes,
        network,
        // No content type: read it, and look.
        readBody: (type) => type === '' || isText(type),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
        ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
      },
    );
  } catch (error) {
    return err(new WebFetchError(messageOf(error), { cause: error }));
  }
  if (page.status < 200 || page.status >= 300) {
    const status = `HTTP ${page.status}${page.statusText ? ` ${page.statusText}` : ''}`;
    return err(new WebFetchError(`${status} from ${page.url}`, { status: page.status }));
  }
  if (page.mediaType !== '' && !isText(page.mediaType)) {
    return err(
      new WebFetchError(
        `${page.url} is ${page.mediaType}, not a page web_fetch can read (HTML, text or JSON); it was not downloaded`,
      ),
    );
  }
  if (page.text.includes('\u0000')) return err(new WebFetchError(`${page.url} is binary content, not text`));
  const html = isHtml(page.mediaType) || (page.mediaType === '' && /^\s*</.test(page.text));
  let readable: { readonly title: string; readonly markdown: string } = { title: '', markdown: page.text };
  if (html) {
    try {
      // What is left of the time limit: the page's markup is the site's, and so is the work it makes.
      readable = await readableMarkdown(page.text, page.url, {
        timeoutMs: Math.max(1, deadline - Date.now()),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      const why =
        error instanceof WorkerTimeoutError
          ? `timed out after ${timeoutMs / 1000} s (reading ${page.url})`
          : `${page.url} could not be read: ${messageOf(error)}`;
      return err(new WebFetchError(why, { cause: error }));
    }
  }
  const note = page.truncated ? `\n…[only the first ${maxBytes} bytes of the page were read]` : '';
  return ok({
    url: page.url,
    mediaType: page.mediaType,
    title: readable.title,
    text: cutText(readable.markdown, maxChars) + note,
    truncated: page.truncated,
  });
}

/** A page as the model reads it: title, where it came from, then its text. */
function formatPage(asked: string, page: WebPage): string {
  const from = page.url === new URL(asked).href ? `URL: ${page.url}` : `URL: ${page.url} (redirected from ${asked})`;
  return [`# ${page.title || page.url}`, from, `Content-Type: ${page.mediaType || 'unknown'}`, '', page.text].join(
    '\n',
  );
}

/**
 * web_fetch: URLs to readable Markdown (fetched at once), each cut to a size with a marker;
 * a failed URL says why without hiding the others.
 */
export function createWebFetch(options: WebFetchOptions = {}): Tool {
  const maxUrls = options.maxUrls ?? 5;
  const network = networkPolicy(options, 'web_fetch');
  const url = z.string().trim().min(1);
  return defineTool({
    name: 'web_fetch',
    description:
      'Fetch web pages (http or https) and read them: the main content of an HTML page as Markdown with its title and links; ' +
      `plain text and JSON as they are. Up to ${maxUrls} URLs at once; long pages are cut.`,
    parameters: z.object({
      urls: z
        .union([url, z.array(url).min(1).max(maxUrls)])
        .describe(`The URL, or a list of up to ${maxUrls} URLs, to fetch.`),
    }),
    parallelSafe: true,
    timeoutMs: (options.timeoutSec ?? 20) * 1000 + 5000,
    execute: async ({ urls }, scope) => {
      const asked = [...new Set(typeof urls === 'string' ? [urls] : urls)];
      const pages = await Promise.all(
        asked.map(async (target) => ({
          target,
          page: await readPage(target, { ...options, signal: scope.signal }, network),
        })),
      );
      const text = pages
        .map(({ target, page }) =>
          page.isOk() ? formatPage(target, page.value) : `# ${target}\nError: ${page.error.message}`,
        )
        .join('\n\n---\n\n');
      return pages.some(({ page }) => page.isOk()) ? text : err(text);
    },
  });
}
