import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpRedirect, McpRedirectAnswer } from './provider.js';

/** The port a loopback sign-in prefers when the host names none. */
export const DEFAULT_CALLBACK_PORT = 33418;

export interface LoopbackSignInOptions {
  /**
   * The port of `http://127.0.0.1:<port>/callback`: only this one (a sign-in fails naming it when
   * another process has it). Default: 33418, else, when that one is taken, a free port the system
   * chooses.
   */
  readonly port?: number;
  /** Shows the person the URL to open (printed, or a browser opened). */
  readonly onAuthorizationUrl: (url: URL) => void;
  /** How long the person has to sign in (default 5 minutes). */
  readonly timeoutMs?: number;
}

/**
 * A sign-in in the person's browser, for `auth` of a server's config: `redirect`, the redirect URL
 * it prefers (`redirectUrl`), and `prepareRedirect`, which listens before each authorization and
 * gives the URL it listens on (another port when the preferred one is taken).
 */
export interface LoopbackSignIn {
  readonly redirectUrl: string;
  readonly prepareRedirect: () => Promise<string>;
  readonly redirect: McpRedirect;
}

const PAGE = (text: string) => `<!doctype html><meta charset="utf-8"><title>OpenManus</title><p>${text}</p>`;
const urlOf = (port: number) => `http://127.0.0.1:${port}/callback`;

interface Waiting {
  readonly state: string | null;
  readonly resolve: (answer: McpRedirectAnswer) => void;
  readonly reject: (error: Error) => void;
}

interface Listener {
  readonly server: Server;
  url: string;
  waiting?: Waiting;
  idle?: NodeJS.Timeout;
}

/**
 * The browser sign-in of a native app (RFC 8252): for each authorization, a listener on
 * 127.0.0.1 takes the one redirect that carries the authorization's state, then closes; a redirect
 * with another state is refused and the listener waits on. It gives up after `timeoutMs`.
 */
export function loopbackSignIn(options: LoopbackSignInOptions): LoopbackSignIn {
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  let open: Listener | undefined;

  const close = (listener: Listener) => {
    clearTimeout(listener.idle);
    if (open === listener) open = undefined;
    listener.server.close();
    listener.server.closeAllConnections();
  };

  const bind = (port: number): Promise<Listener> =>
    new Promise((resolve, reject) => {
      const server = createServer((request, response) => {
        const url = new URL(request.url ?? '/', 'http://127.0.0.1');
        if (request.method !== 'GET' || url.pathname !== '/callback') {
          response.writeHead(404).end();
          return;
        }
        const waiting = listener.waiting;
        const state = url.searchParams.get('state');
        if (!waiting || state !== waiting.state) {
          response.writeHead(400, { 'content-type': 'text/html' }).end(PAGE('This sign-in is not the one asked for.'));
          return;
        }
        const code = url.searchParams.get('code');
        const error = url.searchParams.get('error');
        response
          .writeHead(code ? 200 : 400, { 'content-type': 'text/html', connection: 'close' })
          .end(PAGE(code ? 'Signed in. You can close this tab.' : 'The sign-in was not completed.'));
        close(listener);
        if (code) waiting.resolve({ code, state });
        else {
          const description = url.searchParams.get('error_description');
          waiting.reject(
            new Error(`the sign-in failed: ${[error, description].filter(Boolean).join(': ') || 'no code'}`),
          );
        }
      });
      const listener: Listener = { server, url: '' };
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        // Waiting for no one, it does not keep the process alive.
        server.unref();
        listener.url = urlOf((server.address() as AddressInfo).port);
        open = listener;
        resolve(listener);
      });
    });

  const taken = (error: unknown, port: number) =>
    (error as { code?: string }).code === 'EADDRINUSE'
      ? new Error(
          `port ${port} on 127.0.0.1 is taken by another process: the sign-in cannot take the browser's redirect there`,
        )
      : error;

  /** Listens on the port `url` names, only: the authorization sends the browser there. */
  const listenOn = async (url: string): Promise<Listener> => {
    if (open?.url === url) return open;
    if (open) close(open);
    const port = Number(new URL(url).port);
    return bind(port).catch((error) => {
      throw taken(error, port);
    });
  };

  const prepareRedirect = async (): Promise<string> => {
    if (open) return open.url;
    let listener: Listener;
    if (options.port !== undefined) {
      listener = await listenOn(urlOf(options.port));
    } else {
      // The usual port when it is free; else one the system picks (RFC 8252 §7.3 lets any port in).
      listener = await bind(DEFAULT_CALLBACK_PORT).catch((error) => {
        if ((error as { code?: string }).code !== 'EADDRINUSE') throw error;
        return bind(0);
      });
    }
    // An authorization that never comes does not hold the port for good.
    listener.idle = setTimeout(() => !listener.waiting && close(listener), timeoutMs);
    listener.idle.unref();
    return listener.url;
  };

  const redirect: McpRedirect = async (authorizationUrl) => {
    const listener = await listenOn(
      authorizationUrl.searchParams.get('redirect_uri') ?? urlOf(options.port ?? DEFAULT_CALLBACK_PORT),
    );
    clearTimeout(listener.idle);
    listener.waiting?.reject(new Error('another sign-in began'));
    return new Promise<McpRedirectAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        close(listener);
        reject(new Error(`no sign-in within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      const done =
        <T>(end: (value: T) => void) =>
        (value: T) => {
          clearTimeout(timer);
          end(value);
        };
      listener.waiting = {
        state: authorizationUrl.searchParams.get('state'),
        resolve: done(resolve),
        reject: done(reject),
      };
      options.onAuthorizationUrl(authorizationUrl);
    });
  };

  return { redirectUrl: urlOf(options.port ?? DEFAULT_CALLBACK_PORT), prepareRedirect, redirect };
}
