// Cross-app access (SEP-990, "Enterprise-Managed Authorization"): the person signed in to their
// company's identity provider once; the client exchanges that sign-in's ID token at the identity
// provider for an ID-JAG (an Identity Assertion JWT Authorization Grant, by RFC 8693 token exchange)
// naming the MCP server's authorization server, then presents it there with the jwt-bearer grant
// (RFC 7523) for an access token. No browser, no consent screen: the identity provider's policy
// decides. The SDK's auth() makes the second request (prepareTokenRequest); this makes the first.
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { boundedFetch } from '../boundedFetch.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const ID_JAG_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';

/** How long the identity provider may take to answer one token exchange. */
export const TOKEN_EXCHANGE_TIMEOUT_MS = 30_000;

/** Cross-app access to an MCP server: what a host that signed the person in to its identity provider has. */
export interface McpCrossAppAccess {
  /** The identity provider's token endpoint, where the ID token is exchanged (https, or http on loopback). */
  readonly idpTokenEndpoint: string;
  /** This client at the identity provider. */
  readonly idpClientId: string;
  /** Its secret there, if it has one (sent with client_secret_basic). */
  readonly idpClientSecret?: string;
  /** The person's ID token from the identity provider, or a function that gets a current one (it expires). */
  readonly idToken: string | (() => string | Promise<string>);
  /** This client at the MCP server's authorization server, which the ID-JAG names (its `client_id`). */
  readonly clientId: string;
  /** Its secret there, if it has one. */
  readonly clientSecret?: string;
}

export interface JwtBearerRequestOptions {
  /** The MCP server's URL: the resource when its protected resource metadata names none. */
  readonly serverUrl: string;
  /** Where the SDK found the authorization server (saved by it just before the token request). */
  readonly discovery: OAuthDiscoveryState | undefined;
  readonly scope?: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const strip = (url: string) => url.replace(/\/+$/, '');
/** Their text, cut short and on one line: an error message quotes it. */
const quote = (text: unknown) =>
  String(text)
    .replace(/\p{Cc}+/gu, ' ')
    .slice(0, 200);

/**
 * The parameters of the jwt-bearer grant for the authorization server the SDK discovered: first the
 * token exchange at the identity provider, for an ID-JAG whose audience is that server's issuer and
 * whose resource is the MCP server. Client authentication at the authorization server is the SDK's.
 */
export async function jwtBearerRequest(
  access: McpCrossAppAccess,
  { serverUrl, discovery, scope }: JwtBearerRequestOptions,
): Promise<URLSearchParams> {
  if (!discovery) throw new Error(`cross-app access: no authorization server was found for ${serverUrl}`);
  const metadata = discovery.authorizationServerMetadata;
  const audience = metadata?.issuer ?? discovery.authorizationServerUrl;
  const grants = metadata?.grant_types_supported;
  if (grants && !grants.includes(JWT_BEARER_GRANT)) {
    throw new Error(
      `cross-app access: the authorization server ${quote(audience)} does not take the jwt-bearer grant (it lists ${quote(grants.join(', '))})`,
    );
  }
  const resource = discovery.resourceMetadata?.resource ?? serverUrl;
  const assertion = await exchangeForIdJag(access, { audience, resource, ...(scope ? { scope } : {}) });
  return new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion, ...(scope ? { scope } : {}) });
}

export interface IdJagRequest {
  /** The authorization server the ID-JAG is for (its issuer). */
  readonly audience: string;
  /** The MCP server it is for. */
  readonly resource: string;
  readonly scope?: string;
}

/** The RFC 8693 token exchange at the identity provider: the person's ID token for an ID-JAG. */
export async function exchangeForIdJag(access: McpCrossAppAccess, request: IdJagRequest): Promise<string> {
  const endpoint = idpEndpoint(access.idpTokenEndpoint);
  const idToken = await currentIdToken(access);
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    requested_token_type: ID_JAG_TOKEN_TYPE,
    audience: request.audience,
    resource: request.resource,
    subject_token: idToken,
    subject_token_type: ID_TOKEN_TYPE,
    ...(request.scope ? { scope: request.scope } : {}),
  });
  const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' });
  if (access.idpClientSecret !== undefined) {
    // RFC 6749 §2.3.1: each part form-encoded, then base64.
    const encode = (part: string) => encodeURIComponent(part).replace(/%20/g, '+');
    const basic = Buffer.from(`${encode(access.idpClientId)}:${encode(access.idpClientSecret)}`).toString('base64');
    headers.set('authorization', `Basic ${basic}`);
  } else body.set('client_id', access.idpClientId);

  const at = `the identity provider's token endpoint ${endpoint.origin}${endpoint.pathname}`;
  let status: number;
  let answer: unknown;
  try {
    // Bounded as every answer of a remote server is (the SDK's own token requests go the same way).
    const response = await boundedFetch()(endpoint, {
      method: 'POST',
      headers,
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(TOKEN_EXCHANGE_TIMEOUT_MS),
    });
    status = response.status;
    const text = await response.text();
    try {
      answer = JSON.parse(text);
    } catch {
      answer = undefined;
    }
  } catch (error) {
    throw new Error(`cross-app access: no answer from ${at}: ${quote(error instanceof Error ? error.message : error)}`);
  }
  const fields = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>;
  if (status < 200 || status >= 300) {
    const reason =
      typeof fields.error === 'string'
        ? `${quote(fields.error)}${typeof fields.error_description === 'string' ? `: ${quote(fields.error_description)}` : ''}`
        : `HTTP ${status}`;
    throw new Error(`cross-app access: ${at} refused the token exchange (${reason})`);
  }
  if (answer === undefined) throw new Error(`cross-app access: ${at} answered with something other than JSON`);
  if (fields.issued_token_type !== ID_JAG_TOKEN_TYPE) {
    throw new Error(`cross-app access: ${at} issued a token of type ${quote(fields.issued_token_type)}, not an ID-JAG`);
  }
  const idJag = fields.access_token;
  if (typeof idJag !== 'string' || !idJag) throw new Error(`cross-app access: ${at} issued no ID-JAG`);
  // The ID-JAG goes to the authorization server we discovered: one for another would let that
  // server act as the person wherever the ID-JAG is for. (Its signature is the receiver's to check.)
  const audiences = audiencesOf(idJag);
  if (!audiences) throw new Error(`cross-app access: ${at} issued an ID-JAG that is not a JWT`);
  if (!audiences.some((aud) => strip(aud) === strip(request.audience))) {
    throw new Error(
      `cross-app access: ${at} issued an ID-JAG for ${quote(audiences.join(', ') || 'no audience')}, not for ${quote(request.audience)}: not sent`,
    );
  }
  return idJag;
}

function idpEndpoint(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`cross-app access: the identity provider's token endpoint is not a URL (${quote(text)})`);
  }
  // The ID token is the person's sign-in: it goes in the clear to this machine only.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    throw new Error(
      `cross-app access: the identity provider's token endpoint must be https (or http on loopback), not ${url.origin}`,
    );
  }
  return url;
}

async function currentIdToken(access: McpCrossAppAccess): Promise<string> {
  let idToken: unknown;
  try {
    idToken = typeof access.idToken === 'function' ? await access.idToken() : access.idToken;
  } catch (error) {
    throw new Error(
      `cross-app access: could not get the ID token: ${quote(error instanceof Error ? error.message : error)}`,
    );
  }
  if (typeof idToken !== 'string' || !idToken)
    throw new Error('cross-app access: there is no ID token (auth.crossApp.idToken)');
  return idToken;
}

/** The `aud` of a JWT (a string or a list of them), or undefined if the token is not a JWT. */
function audiencesOf(jwt: string): string[] | undefined {
  const [, payload] = jwt.split('.');
  if (jwt.split('.').length !== 3 || !payload) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (typeof claims !== 'object' || claims === null) return undefined;
    const aud = (claims as { aud?: unknown }).aud;
    if (typeof aud === 'string') return [aud];
    return Array.isArray(aud) ? aud.filter((entry): entry is string => typeof entry === 'string') : [];
  } catch {
    return undefined;
  }
}
