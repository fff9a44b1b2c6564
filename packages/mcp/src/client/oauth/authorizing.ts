import { extractWWWAuthenticateParams, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpOAuthProvider } from './provider.js';

/**
 * How many sign-ins one message may cost: one for a 401 and one for a step-up (a 403 asking for
 * more scope). A server that keeps asking after that will not be satisfied by asking again.
 */
export const MAX_SIGN_INS_PER_MESSAGE = 2;

/**
 * Makes `transport` sign in when the SDK stops at a redirect (`UnauthorizedError`) after the
 * handshake — a server that asks only for its tools, or a step-up for one call — and send the message
 * again. A refused handshake is left to the connection, which signs in outside its deadline and
 * connects again. Returns that sign-in: the redirect, then `transport.finishAuth(code)`.
 */
export function signInOnUnauthorized(
  transport: StreamableHTTPClientTransport | SSEClientTransport,
  provider: McpOAuthProvider,
): () => Promise<void> {
  const signIn = () => provider.completeAuthorization((code) => transport.finishAuth(code));
  const target: Pick<Transport, 'send'> = transport;
  const send = target.send.bind(transport);
  target.send = async (message, options) => {
    for (let signIns = 0; ; signIns++) {
      try {
        return await send(message, options);
      } catch (error) {
        if (!(error instanceof UnauthorizedError) || isInitializeRequest(message)) throw error;
        if (signIns >= MAX_SIGN_INS_PER_MESSAGE) throw error;
        await signIn();
      }
    }
  };
  return signIn;
}

/** `fetch` that tells `provider` of a server's 403 insufficient_scope, and of the scope it named. */
export function noticingScopeChallenges(
  fetch: typeof globalThis.fetch,
  provider: McpOAuthProvider,
): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 403) {
      const { error, scope } = extractWWWAuthenticateParams(response);
      if (error === 'insufficient_scope' && scope) provider.requireScope(scope);
    }
    return response;
  };
}
