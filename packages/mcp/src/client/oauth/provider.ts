import { createHash, randomBytes } from 'node:crypto';
import type {
  AddClientAuthentication,
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { JWT_BEARER_GRANT, jwtBearerRequest, type McpCrossAppAccess } from './crossApp.js';
import { type McpAuthRecord, type McpTokenStore, memoryTokenStore } from './tokenStore.js';

/** What the authorization server sent the browser back with (the query of the redirect). */
export interface McpRedirectAnswer {
  readonly code: string;
  readonly state: string | null;
}

/**
 * Takes a person (or a test) to the authorization URL and resolves with what the authorization
 * server redirected back to the redirect URL: see `loopbackSignIn` for a browser sign-in.
 */
export type McpRedirect = (authorizationUrl: URL) => Promise<McpRedirectAnswer>;

/** Machine-to-machine access: the client_credentials grant, with a secret or a signed JWT. */
export type McpClientCredentials =
  | { readonly clientId: string; readonly clientSecret: string }
  | {
      readonly clientId: string;
      /** PEM (PKCS #8) for RS*, ES* and PS*; the shared secret for HS*. */
      readonly privateKey: string;
      /** Default ES256. */
      readonly algorithm?: string;
    };

/** OAuth 2.1 for a remote MCP server, as the MCP specification has it: see the README's "Authorization (OAuth)". */
export interface McpOAuthOptions {
  /** Where tokens and registrations are kept (default: in memory, for the client's lifetime). */
  readonly store?: McpTokenStore;
  /** The sign-in for the authorization code flow; without it, a server that needs one cannot be used. */
  readonly redirect?: McpRedirect;
  /** Where the authorization server sends the browser back (default `http://127.0.0.1:33418/callback`). */
  readonly redirectUrl?: string;
  /**
   * Readies the redirect before each authorization begins, and gives the URL the browser is to be
   * sent back to, which replaces `redirectUrl` (`loopbackSignIn`'s listens, on another port when
   * its own is taken). A client registered for another redirect URL is registered again.
   */
  readonly prepareRedirect?: () => Promise<string>;
  /** A Client ID Metadata Document (an https URL): the client_id where the server supports it, instead of registering. */
  readonly clientMetadataUrl?: string;
  /** Added to what dynamic client registration sends (client_name, …). */
  readonly clientMetadata?: Partial<OAuthClientMetadata>;
  /** A pre-registered client: no registration. */
  readonly clientId?: string;
  readonly clientSecret?: string;
  /** The authorization server the pre-registered client (or the client credentials) belong to: they go to no other. */
  readonly issuer?: string;
  /** The client_credentials grant instead of a sign-in. */
  readonly clientCredentials?: McpClientCredentials;
  /** Cross-app access (SEP-990) instead of a sign-in: the person's identity provider vouches for them. */
  readonly crossApp?: McpCrossAppAccess;
  /** Asked for when the server names none (neither in its 401 nor in its metadata). */
  readonly scope?: string;
}

/** An `OAuthClientProvider` of the SDK for one MCP server, with what the sign-in needs beyond it. */
export interface McpOAuthProvider extends OAuthClientProvider {
  readonly serverUrl: string;
  /**
   * Takes the authorization the SDK began (it answered `REDIRECT`) through `redirect`, checks the
   * answer's state, and hands the authorization code to `finish` (`transport.finishAuth`).
   * Concurrent callers share one sign-in.
   */
  completeAuthorization(finish: (code: string) => Promise<void>): Promise<void>;
  /** Forgets the tokens and registration kept for the server. */
  signOut(): Promise<void>;
  /** The server refused a token for want of `scope` (a 403 insufficient_scope): the next authorization asks for it. */
  requireScope(scope: string): void;
}

export const DEFAULT_REDIRECT_URL = 'http://127.0.0.1:33418/callback';

/** A URL in both spellings, with and without a trailing slash, is one issuer (as the SDK compares them). */
function sameIssuer(a: string, b: string): boolean {
  const strip = (url: string) => url.replace(/\/+$/, '');
  return strip(a) === strip(b);
}

const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** Whether a token granted `granted` has every scope of `wanted` (space-separated lists). */
function covers(granted: string | undefined, wanted: string): boolean {
  const have = new Set((granted ?? '').split(' '));
  return wanted.split(' ').every((scope) => !scope || have.has(scope));
}

/** The OAuth client of `serverUrl` (what `auth` of a remote server's config makes for its transport). */
export function oauthProvider(serverUrl: string, options: McpOAuthOptions = {}): McpOAuthProvider {
  const store = options.store ?? memoryTokenStore();
  const credentials = options.clientCredentials;
  const crossApp = options.crossApp;
  if (credentials && crossApp) throw new TypeError('auth takes clientCredentials or crossApp, not both');
  // Without a redirect URL the SDK asks no one: it takes a token with prepareTokenRequest's grant.
  let redirectUrl = credentials || crossApp ? undefined : (options.redirectUrl ?? DEFAULT_REDIRECT_URL);
  const prepareRedirect = redirectUrl === undefined ? undefined : options.prepareRedirect;
  const jwt = credentials && 'privateKey' in credentials ? credentials : undefined;
  const secret =
    credentials && 'clientSecret' in credentials
      ? credentials.clientSecret
      : crossApp
        ? crossApp.clientSecret
        : options.clientSecret;
  const clientId = credentials?.clientId ?? crossApp?.clientId ?? options.clientId;

  const metadata = (): OAuthClientMetadata => ({
    client_name: 'OpenManus',
    redirect_uris: redirectUrl ? [redirectUrl] : [],
    grant_types: crossApp
      ? [JWT_BEARER_GRANT]
      : credentials
        ? ['client_credentials']
        : ['authorization_code', 'refresh_token'],
    response_types: redirectUrl ? ['code'] : [],
    token_endpoint_auth_method: jwt ? 'private_key_jwt' : secret ? 'client_secret_basic' : 'none',
    ...(options.scope ? { scope: options.scope } : {}),
    ...options.clientMetadata,
  });
  const configured: OAuthClientInformationMixed | undefined =
    clientId === undefined
      ? undefined
      : {
          client_id: clientId,
          ...(secret !== undefined ? { client_secret: secret } : {}),
          ...(options.issuer ? { issuer: options.issuer } : {}),
        };

  // The record, read once and written through: tokens() is asked on every request.
  let record: McpAuthRecord | undefined;
  let loading: Promise<void> | undefined;
  const load = async (): Promise<McpAuthRecord> => {
    loading ??= store.load(serverUrl).then((found) => {
      record ??= found ?? {};
    });
    await loading;
    return record ?? {};
  };
  let writes: Promise<unknown> = Promise.resolve();
  const update = async (change: Partial<McpAuthRecord>) => {
    record = { ...(await load()), ...change };
    const snapshot = record;
    // One write at a time, in order; a failed one fails its caller, not the writes after it.
    const write = writes.then(() => store.save(serverUrl, snapshot));
    writes = write.catch(() => undefined);
    await write;
  };

  // PKCE verifiers the SDK saved lately: the one an authorization URL goes with is found by its challenge.
  const verifiers: string[] = [];
  let pending: { url: URL; state: string | null; verifier: string } | undefined;
  let signingIn: Promise<void> | undefined;
  // While the code of an authorization is exchanged, its redirect URL must stay the one it had.
  let exchanging = false;
  let wantedScope: string | undefined;

  // For a step-up the SDK would refresh the token, which cannot widen its scope (RFC 6749 §6):
  // without the refresh token, it asks for a new authorization with the scope the server named.
  const usable = (tokens: OAuthTokens | undefined): OAuthTokens | undefined => {
    if (tokens?.refresh_token && wantedScope && !covers(tokens.scope, wantedScope)) {
      const { refresh_token: _, ...access } = tokens;
      return access;
    }
    return tokens;
  };

  const addClientAuthentication: AddClientAuthentication | undefined = jwt
    ? createPrivateKeyJwtAuth({
        issuer: jwt.clientId,
        subject: jwt.clientId,
        privateKey: jwt.privateKey,
        alg: jwt.algorithm ?? 'ES256',
      })
    : undefined;

  const provider: McpOAuthProvider = {
    serverUrl,
    get redirectUrl() {
      return redirectUrl;
    },
    get clientMetadata() {
      return metadata();
    },
    ...(options.clientMetadataUrl ? { clientMetadataUrl: options.clientMetadataUrl } : {}),
    ...(addClientAuthentication ? { addClientAuthentication } : {}),
    state: () => randomBytes(32).toString('base64url'),
    async clientInformation() {
      const { client, tokens } = await load();
      // The SDK asks for the client first: an authorization comes next unless a token can be refreshed.
      const authorizing = redirectUrl !== undefined && !exchanging && !usable(tokens)?.refresh_token;
      if (authorizing && prepareRedirect) redirectUrl = await prepareRedirect();
      if (configured) return configured;
      // Registered for another redirect URL (a port taken since): registered again, not refused.
      const registeredFor = client && 'redirect_uris' in client ? client.redirect_uris : undefined;
      if (authorizing && redirectUrl && registeredFor && !registeredFor.includes(redirectUrl)) return undefined;
      return client;
    },
    async saveClientInformation(client) {
      // Configured credentials are not ours to replace; the SDK only stamps them with their issuer.
      if (!configured) await update({ client });
    },
    async tokens() {
      return usable((await load()).tokens);
    },
    async saveTokens(tokens: OAuthTokens) {
      pending = undefined;
      wantedScope = undefined;
      await update({ tokens, codeVerifier: undefined });
    },
    async saveCodeVerifier(verifier) {
      verifiers.push(verifier);
      if (verifiers.length > 8) verifiers.shift();
    },
    async codeVerifier() {
      const verifier = pending?.verifier ?? (await load()).codeVerifier;
      if (!verifier) throw new Error('no OAuth authorization is under way (no PKCE code verifier)');
      return verifier;
    },
    async redirectToAuthorization(url) {
      // A second 401 while a person is signing in must not replace the URL they are looking at.
      if (signingIn) return;
      const challenge = url.searchParams.get('code_challenge');
      const verifier = verifiers.find((candidate) => challengeOf(candidate) === challenge);
      if (!verifier) throw new Error('the authorization URL has no PKCE challenge of ours');
      pending = { url, state: url.searchParams.get('state'), verifier };
      await update({ codeVerifier: verifier });
    },
    async saveDiscoveryState(discovery: OAuthDiscoveryState) {
      // RFC 8414 §3.3: the metadata must name the server the resource named; the SDK does not check.
      // (A server of the 2025-03-26 protocol, with no resource metadata, is its own authorization
      // server: there is no other server named to compare with, and its issuer may have a path.)
      const issuer = discovery.authorizationServerMetadata?.issuer;
      if (
        discovery.resourceMetadata !== undefined &&
        issuer !== undefined &&
        !sameIssuer(issuer, discovery.authorizationServerUrl)
      ) {
        throw new Error(
          `the authorization server metadata of ${discovery.authorizationServerUrl} names another issuer (${issuer.slice(0, 200)})`,
        );
      }
      await update({ discovery });
    },
    async discoveryState() {
      return (await load()).discovery;
    },
    async invalidateCredentials(scope) {
      const current = await load();
      await update({
        tokens: scope === 'all' || scope === 'tokens' ? undefined : current.tokens,
        client: scope === 'all' || scope === 'client' ? undefined : current.client,
        codeVerifier: scope === 'all' || scope === 'verifier' ? undefined : current.codeVerifier,
        discovery: scope === 'all' || scope === 'discovery' ? undefined : current.discovery,
      });
    },
    ...(credentials
      ? {
          prepareTokenRequest: (scope?: string) =>
            new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
        }
      : {}),
    ...(crossApp
      ? {
          // The SDK has just saved where it found the authorization server: the ID-JAG is for that one.
          prepareTokenRequest: async (scope?: string) =>
            jwtBearerRequest(crossApp, {
              serverUrl,
              discovery: (await load()).discovery,
              ...(scope ? { scope } : {}),
            }),
        }
      : {}),
    completeAuthorization(finish) {
      signingIn ??= signIn()
        .then(async (code) => {
          exchanging = true;
          try {
            await finish(code);
          } finally {
            exchanging = false;
          }
        })
        .finally(() => {
          signingIn = undefined;
        });
      return signingIn;
    },
    requireScope(scope) {
      wantedScope = scope;
    },
    async signOut() {
      pending = undefined;
      record = {};
      await store.remove(serverUrl);
    },
  };

  async function signIn(): Promise<string> {
    const authorization = pending;
    if (!authorization) throw new Error(`${serverUrl} asked for an OAuth sign-in that was never begun`);
    if (!options.redirect) {
      throw new Error(
        `${serverUrl} needs an OAuth sign-in, and no redirect is configured for it (auth.redirect, e.g. loopbackSignIn())`,
      );
    }
    const answer = await options.redirect(authorization.url);
    // The state ties the answer to the request we made: anything else may be an attacker's code.
    if (authorization.state === null || answer.state !== authorization.state) {
      throw new Error('the OAuth redirect came back with the wrong state: refused');
    }
    if (!answer.code) throw new Error('the OAuth redirect came back without a code');
    return answer.code;
  }

  return provider;
}
