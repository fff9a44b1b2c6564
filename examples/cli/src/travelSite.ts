import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { confineIn, NotRegularFileError, openInside, WorkspaceError } from '@openmanus/core';

/** The bundled Kyoto travel site the demo researches (static files, no external resources). */
export const travelSiteRoot = fileURLToPath(new URL('../demo/travel-site/', import.meta.url));

export interface TravelSite {
  /** `http://127.0.0.1:<port>/`, the home page. */
  readonly url: string;
  close(): Promise<void>;
}

export interface TravelSiteOptions {
  /** The directory served (default: the bundled site). Nothing outside it is ever served. */
  readonly root?: string;
  /** Told of each request as it arrives: its method and URL path (to see what a browser fetched). */
  readonly onRequest?: (method: string, url: string) => void;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const contentTypeOf = (path: string) => CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';

// The site is self-contained; the policy makes a browser refuse anything that is not.
const HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'self'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-cache',
};

type Reply =
  | { readonly status: 200; readonly path: string; readonly body: Buffer }
  | { readonly status: 301; readonly location: string }
  | { readonly status: 400 | 403 | 404 | 405; readonly reason: string };

/** The URL path of a request, decoded, or undefined when it is not a plain, well-formed path. */
function requestedPath(url: string): string | undefined {
  const path = url.split(/[?#]/, 1)[0] ?? '';
  if (!path.startsWith('/')) return undefined;
  try {
    const decoded = decodeURIComponent(path);
    return decoded.includes('\0') ? undefined : decoded;
  } catch {
    return undefined;
  }
}

// ELOOP: a symlink put in place of the checked file, which is never followed.
const NOT_FOUND = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG']);

/** The reply for a failed open: only a missing or unservable file is a 404; the rest is a server fault. */
function failure(error: unknown): Reply {
  if (error instanceof WorkspaceError) return { status: 403, reason: 'Forbidden' };
  if (error instanceof NotRegularFileError) return { status: 404, reason: 'Not Found' };
  const code = (error as NodeJS.ErrnoException).code;
  if (code && NOT_FOUND.has(code)) return { status: 404, reason: 'Not Found' };
  throw error;
}

/**
 * What `urlPath` names under `root`: confined the way a tool's workspace path is (`..`, encoded
 * or not, and symlinks leading out are refused, checked again on the opened file), a directory
 * answered by its index.html, or redirected to its `/` form so that relative links resolve.
 */
async function lookUp(root: string, urlPath: string, query: string): Promise<Reply> {
  try {
    const { root: real, target } = await confineIn(root, resolve(root, `.${urlPath}`));
    const handle = await openInside(real, target, 'read', urlPath);
    try {
      if (!(await handle.stat()).isDirectory()) {
        // `page.html/` would be served with every relative link in it broken.
        if (urlPath.endsWith('/')) return { status: 404, reason: 'Not Found' };
        return { status: 200, path: target, body: await handle.readFile() };
      }
    } finally {
      await handle.close();
    }
    // Built from the resolved path, never from the request: `//host` must not become a redirect.
    const local = relative(real, target).split(sep).join('/');
    if (!urlPath.endsWith('/')) return { status: 301, location: `${encodeURI(local ? `/${local}/` : '/')}${query}` };
    return await lookUp(root, `${urlPath}index.html`, '');
  } catch (error) {
    return failure(error);
  }
}

async function reply(root: string, req: IncomingMessage): Promise<Reply> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return { status: 405, reason: 'Method Not Allowed' };
  const url = req.url ?? '/';
  const path = requestedPath(url);
  if (path === undefined) return { status: 400, reason: 'Bad Request' };
  const queryAt = url.indexOf('?');
  return lookUp(root, path, queryAt < 0 ? '' : url.slice(queryAt));
}

/** The body of an error reply: the site's own 404 page for a 404, a line of text otherwise. */
async function errorPage(root: string, status: number, reason: string): Promise<{ type: string; body: Buffer }> {
  const page = status === 404 ? await lookUp(root, '/404.html', '') : undefined;
  if (page?.status === 200) return { type: contentTypeOf(page.path), body: page.body };
  return { type: 'text/plain; charset=utf-8', body: Buffer.from(`${status} ${reason}\n`) };
}

async function respond(root: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const answer = await reply(root, req);
  if (answer.status === 301) {
    res.writeHead(301, { ...HEADERS, location: answer.location, 'content-length': 0 }).end();
    return;
  }
  const { type, body } =
    answer.status === 200
      ? { type: contentTypeOf(answer.path), body: answer.body }
      : await errorPage(root, answer.status, answer.reason);
  if (answer.status === 405) res.setHeader('allow', 'GET, HEAD');
  res.writeHead(answer.status, { ...HEADERS, 'content-type': type, 'content-length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * Serves the travel site (or `root`) on 127.0.0.1 at a free port: GET and HEAD of the files under
 * it, with their content types; anything else is a 404 page with status 404, a path leading
 * out of it a 403.
 */
export async function startTravelSite(options: TravelSiteOptions = {}): Promise<TravelSite> {
  const root = resolve(options.root ?? travelSiteRoot);
  const server = createServer((req, res) => {
    options.onRequest?.(req.method ?? '', req.url ?? '');
    respond(root, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('500 Internal Server Error\n');
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', done);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((done, fail) => {
        server.close((error) => (error ? fail(error) : done()));
        // A browser keeps its connections open; they must not hold the server up.
        server.closeAllConnections();
      }),
  };
}

// `pnpm -C examples/cli travel-site`: serve the site until Ctrl+C.
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const site = await startTravelSite();
  process.stdout.write(`${site.url}\n`);
  process.stderr.write('The Kyoto travel site of the demo is served at the URL above. Ctrl+C stops it.\n');
  const stop = () => void site.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
