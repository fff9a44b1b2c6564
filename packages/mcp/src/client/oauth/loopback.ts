import { createServer } from 'node:http';
import type { McpRedirect } from './provider.js';

export interface LoopbackSignInOptions {
  /** The port of `http://127.0.0.1:<port>/callback` (default 33418); the redirect URL is registered with it. */
  readonly port?: number;
  /** Shows the person the URL to open (printed, or a browser opened). */
  readonly onAuthorizationUrl: (url: URL) => void;
  /** How long the person has to sign in (default 5 minutes). */
  readonly timeoutMs?: number;
}

/** A sign-in in the person's browser: `redirectUrl` and `redirect` for `auth` of a server's config. */
export interface LoopbackSignIn {
  readonly redirectUrl: string;
  readonly redirect: McpRedirect;
}

const PAGE = (text: string) => `<!doctype html><meta charset="utf-8"><title>OpenManus</title><p>${text}</p>`;

/**
 * The browser sign-in of a native app (RFC 8252): for each authorization, a listener on
 * 127.0.0.1 takes the one redirect that carries the authorization's state, then closes; a redirect
 * with another state is refused and the listener waits on. It gives up after `timeoutMs`.
 */
export function loopbackSignIn(options: LoopbackSignInOptions): LoopbackSignIn {
  const port = options.port ?? 33418;
  const redirectUrl = `http://127.0.0.1:${port}/callback`;
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  const redirect: McpRedirect = (authorizationUrl) =>
    new Promise((resolve, reject) => {
      const expected = authorizationUrl.searchParams.get('state');
      let timer: NodeJS.Timeout | undefined;
      const finish = (end: () => void) => {
        clearTimeout(timer);
        server.close();
        server.closeAllConnections();
        end();
      };
      const server = createServer((request, response) => {
        const url = new URL(request.url ?? '/', redirectUrl);
        if (request.method !== 'GET' || url.pathname !== '/callback') {
          response.writeHead(404).end();
          return;
        }
        const state = url.searchParams.get('state');
        if (state !== expected) {
          response.writeHead(400, { 'content-type': 'text/html' }).end(PAGE('This sign-in is not the one asked for.'));
          return;
        }
        const code = url.searchParams.get('code');
        const error = url.searchParams.get('error');
        response
          .writeHead(code ? 200 : 400, { 'content-type': 'text/html', connection: 'close' })
          .end(PAGE(code ? 'Signed in. You can close this tab.' : 'The sign-in was not completed.'));
        if (code) finish(() => resolve({ code, state }));
        else {
          const description = url.searchParams.get('error_description');
          finish(() =>
            reject(new Error(`the sign-in failed: ${[error, description].filter(Boolean).join(': ') || 'no code'}`)),
          );
        }
      });
      server.once('error', (error) => finish(() => reject(error)));
      server.listen(port, '127.0.0.1', () => {
        timer = setTimeout(
          () => finish(() => reject(new Error(`no sign-in within ${Math.round(timeoutMs / 1000)} s`))),
          timeoutMs,
        );
        options.onAuthorizationUrl(authorizationUrl);
      });
    });
  return { redirectUrl, redirect };
}
