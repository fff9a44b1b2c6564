// Cross-app access (SEP-990): createMcpClient against a company's identity provider, an MCP
// server's authorization server that takes the jwt-bearer grant, and the MCP server behind it, each
// a node:http server on 127.0.0.1. The identity provider checks the person's ID token and its policy
// and signs ID-JAGs; the authorization server trusts its signature, checks the client, the audience
// and the resource, and issues access tokens that the MCP server takes.
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_MESSAGE_BYTES } from '../src/client/boundedFetch.js';
import { parseMcpServers } from '../src/client/config.js';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import type { McpCrossAppAccess } from '../src/client/oauth/crossApp.js';
import { block, observe, toolNamed } from './helpers.js';

const IDP_CLIENT = { id: 'host-at-idp', secret: 'idp-s3cret-value' };
const MCP_CLIENT = { id: 'host-at-tracker', secret: 'as-s3cret-value' };
const PERSON = 'ada@example.com';

// HS256 with the identity provider's key: the authorization server is configured to trust it.
const IDP_KEY = randomBytes(32);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const mac = (input: string) => createHmac('sha256', IDP_KEY).update(input).digest();
function sign(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const input = `${b64({ alg: 'HS256', ...header })}.${b64(claims)}`;
  return `${input}.${mac(input).toString('base64url')}`;
}
function verify(jwt: string): { header: Record<string, unknown>; claims: Record<string, unknown> } | undefined {
  const [header, claims, signature] = jwt.split('.');
  if (!header || !claims || !signature) return undefined;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(`${header}.${claims}`);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const parse = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>;
  const decoded = { header: parse(header), claims: parse(claims) };
  return Number(decoded.claims.exp) > Date.now() / 1000 ? decoded : undefined;
}
const now = () => Math.floor(Date.now() / 1000);

/** The ID token of the person's sign-in at the identity provider (OpenID Connect), for the host. */
function idTokenFor(sub: string, issuer: string): string {
  return sign(
    { typ: 'JWT' },
    { iss: issuer, sub, aud: IDP_CLIENT.id, iat: now(), exp: now() + 3600, jti: randomUUID() },
  );
}

async function body(req: IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 64 * 1024) throw new Error('too big');
  }
  return new URLSearchParams(text);
}
const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
};
/** client_secret_basic as RFC 6749 §2.3.1 writes it. */
function basicAuth(req: IncomingMessage): [string, string] | undefined {
  const encoded = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!encoded) return undefined;
  const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
  const [id = '', secret = ''] = Buffer.from(encoded, 'base64').toString().split(':');
  return [decode(id), decode(secret)];
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<Server> {
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: 'server_error', error_description: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return server;
}
const baseOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

interface EnterpriseOptions {
  /** The identity provider's policy: who may use the MCP server. */
  readonly allowed?: (sub: string) => boolean;
  /** The audience the identity provider writes in its ID-JAGs (default: the one asked for). */
  readonly idJagAudience?: string;
  /** What the identity provider answers instead, e.g. a body of more than 10 MB. */
  readonly idpAnswer?: (res: ServerResponse) => void;
  /** The grants the authorization server's metadata lists (default the jwt-bearer grant only). */
  readonly grantTypes?: readonly string[];
}

interface Enterprise {
  readonly idpIssuer: string;
  readonly idpTokenEndpoint: string;
  readonly issuer: string;
  readonly mcpUrl: string;
  /** The requests each endpoint took, as they came. */
  readonly exchanges: URLSearchParams[];
  readonly idpClientAuth: ([string, string] | undefined)[];
  readonly grants: URLSearchParams[];
  readonly refusedGrants: string[];
  expireAccessTokens(): void;
}

async function startEnterprise(options: EnterpriseOptions = {}): Promise<Enterprise> {
  const exchanges: URLSearchParams[] = [];
  const idpClientAuth: ([string, string] | undefined)[] = [];
  const grants: URLSearchParams[] = [];
  const refusedGrants: string[] = [];
  const accessTokens = new Map<string, { sub: string; expired: boolean }>();
  let idpIssuer = '';
  let issuer = '';
  let mcpUrl = '';

  const idp = await listen(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/token') return json(res, 404, { error: 'not_found' });
    const form = await body(req);
    exchanges.push(form);
    idpClientAuth.push(basicAuth(req));
    if (options.idpAnswer) return options.idpAnswer(res);
    const [clientId, clientSecret] = basicAuth(req) ?? [];
    if (clientId !== IDP_CLIENT.id || clientSecret !== IDP_CLIENT.secret) {
      return json(res, 401, { error: 'invalid_client' });
    }
    if (
      form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange' ||
      form.get('requested_token_type') !== 'urn:ietf:params:oauth:token-type:id-jag' ||
      form.get('subject_token_type') !== 'urn:ietf:params:oauth:token-type:id_token' ||
      !form.get('audience') ||
      !form.get('resource')
    ) {
      return json(res, 400, { error: 'invalid_request' });
    }
    const idToken = verify(form.get('subject_token') ?? '');
    if (!idToken || idToken.claims.iss !== idpIssuer || idToken.claims.aud !== IDP_CLIENT.id) {
      return json(res, 400, { error: 'invalid_grant', error_description: 'the ID token is not valid' });
    }
    const sub = String(idToken.claims.sub);
    if (!(options.allowed ?? (() => true))(sub)) {
      return json(res, 400, { error: 'invalid_grant', error_description: `${sub} may not use this application` });
    }
    const idJag = sign(
      { typ: 'oauth-id-jag+jwt' },
      {
        iss: idpIssuer,
        sub,
        aud: options.idJagAudience ?? form.get('audience'),
        resource: form.get('resource'),
        client_id: MCP_CLIENT.id,
        jti: randomUUID(),
        iat: now(),
        exp: now() + 300,
        ...(form.get('scope') ? { scope: form.get('scope') } : {}),
      },
    );
    json(res, 200, {
      access_token: idJag,
      issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      token_type: 'N_A',
      expires_in: 300,
    });
  });
  idpIssuer = baseOf(idp);

  const refuse = (res: ServerResponse, why: string, error = 'invalid_grant', status = 400) => {
    refusedGrants.push(why);
    json(res, status, { error, error_description: why });
  };
  const as = await listen(async (req, res) => {
    if (req.method === 'GET' && req.url === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        response_types_supported: ['code'],
        grant_types_supported: options.grantTypes ?? ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
      });
    }
    if (req.method !== 'POST' || req.url !== '/token') return json(res, 404, { error: 'not_found' });
    const form = await body(req);
    grants.push(form);
    const [clientId, clientSecret] = basicAuth(req) ?? [];
    if (clientId !== MCP_CLIENT.id || clientSecret !== MCP_CLIENT.secret) {
      return refuse(res, 'unknown client', 'invalid_client', 401);
    }
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return refuse(res, 'only the jwt-bearer grant', 'unsupported_grant_type');
    }
    const grant = verify(form.get('assertion') ?? '');
    if (grant?.header.typ !== 'oauth-id-jag+jwt' || grant.claims.iss !== idpIssuer) {
      return refuse(res, 'not an ID-JAG of the trusted identity provider');
    }
    if (grant.claims.aud !== issuer) return refuse(res, `the ID-JAG is for ${grant.claims.aud}`);
    if (grant.claims.client_id !== clientId) return refuse(res, 'the ID-JAG is for another client');
    if (grant.claims.resource !== mcpUrl) return refuse(res, 'the ID-JAG is for another resource');
    const access = randomBytes(24).toString('base64url');
    accessTokens.set(access, { sub: String(grant.claims.sub), expired: false });
    json(res, 200, { access_token: access, token_type: 'Bearer', expires_in: 3600 });
  });
  issuer = baseOf(as);

  const mcp = await listen(async (req, res) => {
    const resourceMetadata = `${baseOf(mcp)}/.well-known/oauth-protected-resource/mcp`;
    if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource/mcp') {
      return json(res, 200, { resource: mcpUrl, authorization_servers: [issuer] });
    }
    if (req.url !== '/mcp') return json(res, 404, { error: 'not_found' });
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const token = accessTokens.get(bearer);
    if (!token || token.expired) {
      return json(
        res,
        401,
        { error: 'invalid_token' },
        {
          'www-authenticate': `Bearer error="invalid_token", resource_metadata="${resourceMetadata}"`,
        },
      );
    }
    const server = new McpServer({ name: 'tracker', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Who the token is for' }, () => ({
      content: [{ type: 'text', text: token.sub }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  mcpUrl = `${baseOf(mcp)}/mcp`;

  return {
    idpIssuer,
    idpTokenEndpoint: `${idpIssuer}/token`,
    issuer,
    mcpUrl,
    exchanges,
    idpClientAuth,
    grants,
    refusedGrants,
    expireAccessTokens() {
      for (const token of accessTokens.values()) token.expired = true;
    },
  };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What the host has: its registrations at both servers, and the person's ID token. */
const access = (enterprise: Enterprise, change: Partial<McpCrossAppAccess> = {}): McpCrossAppAccess => ({
  idpTokenEndpoint: enterprise.idpTokenEndpoint,
  idpClientId: IDP_CLIENT.id,
  idpClientSecret: IDP_CLIENT.secret,
  idToken: idTokenFor(PERSON, enterprise.idpIssuer),
  clientId: MCP_CLIENT.id,
  clientSecret: MCP_CLIENT.secret,
  ...change,
});

function client(enterprise: Enterprise, crossApp: McpCrossAppAccess, scope?: string): McpClient {
  const made = createMcpClient({
    servers: { tracker: { type: 'http', url: enterprise.mcpUrl, auth: { crossApp, ...(scope ? { scope } : {}) } } },
    reconnect: { initialDelayMs: 60_000 },
  });
  cleanups.push(() => made.close());
  return made;
}

const whoami = (made: McpClient) => observe(toolNamed(made, 'mcp_tracker_whoami'), {});
/** No secret of the host's, nor the person's ID token, in what the client reports. */
function expectNoSecrets(text: string | undefined, crossApp: McpCrossAppAccess) {
  for (const secret of [IDP_CLIENT.secret, MCP_CLIENT.secret, String(crossApp.idToken)]) {
    expect(text).not.toContain(secret);
  }
}

describe('cross-app access (SEP-990)', () => {
  it("exchanges the person's ID token for an ID-JAG, then the ID-JAG for an access token", async () => {
    const enterprise = await startEnterprise();
    const crossApp = access(enterprise);
    const made = client(enterprise, crossApp, 'tickets:read');
    await made.connect();
    expect(made.status().tracker).toMatchObject({ state: 'connected', tools: ['mcp_tracker_whoami'] });
    expect((await whoami(made)).output).toBe(block('tracker', PERSON));

    const [exchange] = enterprise.exchanges;
    expect(Object.fromEntries(exchange ?? [])).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      // The authorization server the MCP server's metadata names, and the MCP server itself.
      audience: enterprise.issuer,
      resource: enterprise.mcpUrl,
      subject_token: crossApp.idToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      scope: 'tickets:read',
    });
    expect(enterprise.idpClientAuth).toEqual([[IDP_CLIENT.id, IDP_CLIENT.secret]]);
    expect(enterprise.grants).toHaveLength(1);
    expect(enterprise.grants[0]?.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(enterprise.grants[0]?.get('resource')).toBe(enterprise.mcpUrl);
    expect(enterprise.refusedGrants).toEqual([]);
  });

  it('asks the host for a current ID token at each exchange, as an access token expires', async () => {
    const enterprise = await startEnterprise();
    const given: string[] = [];
    const made = client(
      enterprise,
      access(enterprise, {
        idToken: async () => {
          given.push(idTokenFor(PERSON, enterprise.idpIssuer));
          return given.at(-1) ?? '';
        },
      }),
    );
    await made.connect();
    expect((await whoami(made)).output).toBe(block('tracker', PERSON));
    enterprise.expireAccessTokens();
    expect((await whoami(made)).output).toBe(block('tracker', PERSON));
    // One exchange for the handshake, and one for each request the expired token was refused for
    // (the tool list and the call may go together).
    expect(given.length).toBeGreaterThanOrEqual(2);
    expect(enterprise.exchanges.map((form) => form.get('subject_token'))).toEqual(given);
    expect(enterprise.grants).toHaveLength(given.length);
    expect(enterprise.refusedGrants).toEqual([]);
  });

  it("sends the client's id in the body to an identity provider it has no secret at", async () => {
    const enterprise = await startEnterprise({
      idpAnswer: (res) => json(res, 401, { error: 'invalid_client', error_description: 'a secret is required' }),
    });
    const crossApp = access(enterprise, { idpClientSecret: undefined });
    const made = client(enterprise, crossApp);
    await made.connect();
    expect(enterprise.idpClientAuth).toEqual([undefined]);
    expect(enterprise.exchanges[0]?.get('client_id')).toBe(IDP_CLIENT.id);
    expect(made.status().tracker?.error).toContain('refused the token exchange (invalid_client: a secret is required)');
  });

  it("reports the identity provider's refusal, and presents nothing to the authorization server", async () => {
    const enterprise = await startEnterprise({ allowed: (sub) => sub !== PERSON });
    const crossApp = access(enterprise);
    const made = client(enterprise, crossApp);
    await made.connect();
    const error = made.status().tracker?.error;
    expect(error).toContain(
      `cross-app access: the identity provider's token endpoint ${enterprise.idpTokenEndpoint} refused the token exchange (invalid_grant: ${PERSON} may not use this application)`,
    );
    expectNoSecrets(error, crossApp);
    expect(enterprise.grants).toEqual([]);
  });

  it('does not present an ID-JAG made out to another authorization server', async () => {
    // An ID-JAG for another server would let this one act as the person there.
    const enterprise = await startEnterprise({ idJagAudience: 'https://other-as.example.com' });
    const crossApp = access(enterprise);
    const made = client(enterprise, crossApp);
    await made.connect();
    const error = made.status().tracker?.error;
    expect(error).toContain(
      `issued an ID-JAG for https://other-as.example.com, not for ${enterprise.issuer}: not sent`,
    );
    expectNoSecrets(error, crossApp);
    expect(enterprise.exchanges).toHaveLength(1);
    expect(enterprise.grants).toEqual([]);
  });

  it("reports the authorization server's refusal of the grant", async () => {
    // The identity provider knows the host by the id it has at the authorization server; a host
    // that names another client there has an ID-JAG that is not for it.
    const enterprise = await startEnterprise();
    const crossApp = access(enterprise, { clientId: 'someone-else', clientSecret: MCP_CLIENT.secret });
    const made = client(enterprise, crossApp);
    await made.connect();
    const error = made.status().tracker?.error;
    expect(error).toContain('the OAuth sign-in failed');
    expect(error).toContain('unknown client');
    expectNoSecrets(error, crossApp);
    // (The SDK tries once more, with the client information forgotten: the same refusal.)
    expect(new Set(enterprise.refusedGrants)).toEqual(new Set(['unknown client']));
  });

  it('asks nothing of an authorization server that does not take the jwt-bearer grant', async () => {
    const enterprise = await startEnterprise({ grantTypes: ['authorization_code', 'refresh_token'] });
    const made = client(enterprise, access(enterprise));
    await made.connect();
    expect(made.status().tracker?.error).toContain(
      `the authorization server ${enterprise.issuer} does not take the jwt-bearer grant (it lists authorization_code, refresh_token)`,
    );
    expect(enterprise.exchanges).toEqual([]);
    expect(enterprise.grants).toEqual([]);
  });

  it("stops reading an identity provider's answer of more than 10 MB", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const enterprise = await startEnterprise({
      idpAnswer: (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const more = () => {
          // Writes until the client stops reading (and closes) or well past the limit.
          for (let sent = 0; sent < 2 * (MAX_MESSAGE_BYTES / chunk.length); sent++) {
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        res.on('error', () => {});
        more();
      },
    });
    const made = client(enterprise, access(enterprise));
    await made.connect();
    expect(made.status().tracker?.error).toContain(
      `no answer from the identity provider's token endpoint ${enterprise.idpTokenEndpoint}: the server sent a message of more than 10 MB`,
    );
    expect(enterprise.grants).toEqual([]);
  });

  it('sends the ID token over https only, but to this machine', async () => {
    const enterprise = await startEnterprise();
    const made = client(enterprise, access(enterprise, { idpTokenEndpoint: 'http://idp.example.com/token' }));
    await made.connect();
    expect(made.status().tracker?.error).toContain(
      "the identity provider's token endpoint must be https (or http on loopback), not http://idp.example.com",
    );
    expect(enterprise.grants).toEqual([]);
  });

  it('is written in config/mcp.json with the ID token as text, and not with clientCredentials', () => {
    const crossApp = {
      idpTokenEndpoint: 'https://idp.example.com/oauth2/token',
      idpClientId: 'host',
      idToken: 'eyJ.e30.sig',
      clientId: 'host-at-tracker',
    };
    const url = 'https://mcp.example.com/mcp';
    const parsed = parseMcpServers({ tracker: { url, auth: { crossApp } } });
    expect(parsed.isOk() && parsed.value.tracker).toEqual({ url, auth: { crossApp } });
    const both = parseMcpServers({
      tracker: { url, auth: { crossApp, clientCredentials: { clientId: 'a', clientSecret: 'b' } } },
    });
    expect(both.isErr() && both.error).toMatchObject({
      key: 'servers.tracker.auth.crossApp',
      message: 'cannot be given with clientCredentials (each is a way to get a token)',
    });
    const { idToken: _, ...withoutToken } = crossApp;
    const noToken = parseMcpServers({ tracker: { url, auth: { crossApp: withoutToken } } });
    expect(noToken.isErr() && noToken.error).toMatchObject({
      key: 'servers.tracker.auth.crossApp.idToken',
      message: 'must be the ID token, or (in code) a function that gets one',
    });
  });
});
