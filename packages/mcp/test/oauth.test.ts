// OAuth 2.1 for remote servers: createMcpClient against an MCP server behind the SDK's own
// authorization server (fixtures/oauthServer.ts), over real HTTP on 127.0.0.1 — sign-in with PKCE
// and dynamic registration, refresh, client credentials, step-up, tokens kept on disk — and what a
// hostile authorization server or redirect cannot do.
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseMcpServers } from '../src/client/config.js';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import { DEFAULT_CALLBACK_PORT, loopbackSignIn } from '../src/client/oauth/loopback.js';
import {
  DEFAULT_REDIRECT_URL,
  type McpOAuthOptions,
  type McpRedirect,
  oauthProvider,
} from '../src/client/oauth/provider.js';
import { fileTokenStore, MAX_RECORD_BYTES, memoryTokenStore } from '../src/client/oauth/tokenStore.js';
import { type ProtectedServer, startProtectedServer } from './fixtures/oauthServer.js';
import { block, observe, tempWorkspace, toolNamed } from './helpers.js';

/** A person who approves at once: follows the authorization URL to the redirect and reads its query. */
const approve =
  (seen: URL[] = []): McpRedirect =>
  async (url) => {
    seen.push(url);
    const response = await fetch(url, { redirect: 'manual' });
    const location = new URL(response.headers.get('location') ?? '');
    return { code: location.searchParams.get('code') ?? '', state: location.searchParams.get('state') };
  };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function protectedServer(options?: Parameters<typeof startProtectedServer>[0]): Promise<ProtectedServer> {
  const server = await startProtectedServer(options);
  cleanups.push(() => server.close());
  return server;
}

function client(url: string, auth: McpOAuthOptions, type: 'http' | 'sse' = 'http'): McpClient {
  const made = createMcpClient({
    servers: { safe: { type, url, auth } },
    reconnect: { initialDelayMs: 60_000 },
  });
  cleanups.push(() => made.close());
  return made;
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const whoami = (made: McpClient) => observe(toolNamed(made, 'mcp_safe_whoami'), {});

describe('OAuth for a remote server', () => {
  it('signs in with PKCE after registering itself, then calls the tools', async () => {
    const server = await protectedServer();
    const seen: URL[] = [];
    const made = client(server.url, { redirect: approve(seen) });
    await made.connect();
    expect(made.status().safe).toMatchObject({ state: 'connected', tools: ['mcp_safe_whoami'] });
    expect((await whoami(made)).output).toBe(block('safe', 'client known'));
    expect(server.stats.registrations).toBe(1);
    expect(seen).toHaveLength(1);
    const [url] = seen;
    expect(url?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url?.searchParams.get('state')).toMatch(/^[\w-]{43}$/);
    // The scope the server's metadata names, and the resource it protects (RFC 8707).
    expect(url?.searchParams.get('scope')).toBe('mcp:read');
    expect(url?.searchParams.get('resource')).toBe(server.url);
    expect(server.stats.codeExchanges).toBe(1);
  });

  it('signs in over SSE too', async () => {
    const server = await protectedServer();
    const made = client(server.sseUrl, { redirect: approve() }, 'sse');
    await made.connect();
    expect(made.status().safe).toMatchObject({ state: 'connected', transport: 'sse' });
    expect((await whoami(made)).output).toBe(block('safe', 'client known'));
    expect(server.stats.codeExchanges).toBe(1);
  });

  it('signs in through the browser: a listener on 127.0.0.1 takes the redirect, or the refusal', async () => {
    const server = await protectedServer();
    const port = await freePort();
    const shown: URL[] = [];
    // The browser: to the authorization server, then back to where it redirects.
    const browse = (decline: boolean) => async (url: URL) => {
      shown.push(url);
      const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
      if (decline) {
        back.searchParams.delete('code');
        back.searchParams.set('error', 'access_denied');
      }
      await fetch(back);
    };
    const declined = client(server.url, loopbackSignIn({ port, onAuthorizationUrl: (url) => void browse(true)(url) }));
    await declined.connect();
    expect(declined.status().safe?.error).toContain('the sign-in failed: access_denied');
    const made = client(server.url, loopbackSignIn({ port, onAuthorizationUrl: (url) => void browse(false)(url) }));
    await made.connect();
    expect((await whoami(made)).output).toBe(block('safe', 'client known'));
    expect(shown.map((url) => url.searchParams.get('redirect_uri'))).toEqual([
      `http://127.0.0.1:${port}/callback`,
      `http://127.0.0.1:${port}/callback`,
    ]);
  });

  it('refreshes an expired access token without a new sign-in', async () => {
    const server = await protectedServer();
    const made = client(server.url, { redirect: approve() });
    await made.connect();
    server.expireAccessTokens();
    expect((await whoami(made)).output).toBe(block('safe', 'client known'));
    expect(server.stats).toMatchObject({ refreshes: 1, codeExchanges: 1 });
    expect(server.stats.authorizations).toHaveLength(1);
  });

  it('gets a token with client credentials, without a person', async () => {
    const credentials = { clientId: 'robot', clientSecret: 's3cret' };
    const server = await protectedServer({ clientCredentials: credentials });
    const made = client(server.url, { clientCredentials: credentials });
    await made.connect();
    expect((await whoami(made)).output).toBe(block('safe', 'client known'));
    expect(server.stats).toMatchObject({ clientCredentialGrants: 1, registrations: 0, authorizations: [] });
  });

  it('asks for more scope when a call needs it (step-up), once', async () => {
    const server = await protectedServer({ callScope: 'mcp:write' });
    const made = client(server.url, { redirect: approve() });
    await made.connect();
    expect((await whoami(made)).output).toBe(block('safe', 'client known'));
    expect(server.stats.authorizations.map(({ scopes }) => scopes.join(' '))).toEqual([
      'mcp:read',
      'mcp:read mcp:write',
    ]);
  });

  it('keeps its tokens in files: a second client needs no sign-in', async () => {
    const server = await protectedServer();
    const dir = join(await tempWorkspace(), 'tokens');
    cleanups.push(() => rm(join(dir, '..'), { recursive: true, force: true }));
    const first = client(server.url, { store: fileTokenStore(dir), redirect: approve() });
    await first.connect();
    await first.close();

    const refused: McpRedirect = async () => {
      throw new Error('no sign-in was expected');
    };
    const second = client(server.url, { store: fileTokenStore(dir), redirect: refused });
    await second.connect();
    expect((await whoami(second)).output).toBe(block('safe', 'client known'));
    expect(server.stats.authorizations).toHaveLength(1);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const [file, ...others] = await readdir(dir);
    expect(others).toEqual([]);
    expect((await stat(join(dir, file ?? ''))).mode & 0o777).toBe(0o600);
  });

  it('refuses a redirect whose state is not the one it sent', async () => {
    const server = await protectedServer();
    const forged: McpRedirect = async (url) => ({ ...(await approve()(url)), state: 'forged' });
    const made = client(server.url, { redirect: forged });
    await made.connect();
    expect(made.status().safe?.state).not.toBe('connected');
    expect(made.status().safe?.error).toContain('wrong state');
    expect(server.stats.codeExchanges).toBe(0);
  });

  it('says what is missing when a server needs a sign-in and there is none', async () => {
    const server = await protectedServer();
    const made = client(server.url, {});
    await made.connect();
    expect(made.status().safe?.error).toContain('needs an OAuth sign-in');
  });
});

describe("the sign-in's callback port", () => {
  /** Holds `port` on 127.0.0.1, as another process would, until the test ends. */
  async function occupy(port: number) {
    const holder = createServer();
    // Already taken by someone else is taken too.
    await new Promise<void>((resolve, reject) => {
      holder.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve() : reject(error)));
      holder.listen(port, '127.0.0.1', resolve);
    });
    cleanups.push(() => new Promise((resolve) => (holder.listening ? holder.close(resolve) : resolve(undefined))));
  }
  /** The browser: to the authorization server, then back to where it redirects. */
  const browse = (shown: URL[]) => async (url: URL) => {
    shown.push(url);
    await fetch(new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? ''));
  };

  it('with 33418 taken, is one the system picks, and a client registered for 33418 is registered again', async () => {
    // A server that takes only the redirect URL registered, port and all.
    const server = await protectedServer({ exactRedirectUris: true });
    const store = memoryTokenStore();
    // An earlier sign-in, registered for the default redirect URL; its tokens are gone since.
    const earlier = client(server.url, { store, redirect: approve() });
    await earlier.connect();
    await earlier.close();
    const { tokens: _, ...registered } = (await store.load(server.url)) ?? {};
    expect(registered.client).toMatchObject({ redirect_uris: [DEFAULT_REDIRECT_URL] });
    await store.save(server.url, registered);

    await occupy(DEFAULT_CALLBACK_PORT);
    const shown: URL[] = [];
    const made = client(server.url, {
      store,
      ...loopbackSignIn({ onAuthorizationUrl: (url) => void browse(shown)(url) }),
    });
    await made.connect();
    expect((await whoami(made)).output).toBe(block('safe', 'client known'));
    const redirectUri = shown[0]?.searchParams.get('redirect_uri') ?? '';
    expect(redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(redirectUri).not.toBe(DEFAULT_REDIRECT_URL);
    expect(server.stats.registrations).toBe(2);
    const saved = await store.load(server.url);
    expect(saved?.client).toMatchObject({ redirect_uris: [redirectUri] });
    expect(saved?.tokens?.access_token).toEqual(expect.any(String));
    // Its listener closed with the sign-in.
    await expect(fetch(redirectUri)).rejects.toThrow();
  });

  it('is not listened on for a refresh: a taken one does not matter, and the client stays the one registered', async () => {
    const server = await protectedServer({ exactRedirectUris: true });
    const store = memoryTokenStore();
    const earlier = client(server.url, { store, redirect: approve() });
    await earlier.connect();
    await earlier.close();
    server.expireAccessTokens();
    const port = await freePort();
    await occupy(port);
    const shown: URL[] = [];
    const made = client(server.url, {
      store,
      ...loopbackSignIn({ port, onAuthorizationUrl: (url) => void shown.push(url) }),
    });
    await made.connect();
    expect((await whoami(made)).output).toBe(block('safe', 'client known'));
    expect([server.stats.refreshes, server.stats.registrations, shown]).toEqual([1, 1, []]);
  });

  it('is only the one the host names: taken, the sign-in fails naming it', async () => {
    const server = await protectedServer();
    const port = await freePort();
    await occupy(port);
    const shown: URL[] = [];
    const made = client(server.url, loopbackSignIn({ port, onAuthorizationUrl: (url) => void shown.push(url) }));
    await made.connect();
    expect(made.status().safe?.error).toContain(`port ${port} on 127.0.0.1 is taken by another process`);
    expect(shown).toEqual([]);
  });
});

/** A server whose every 401 points to authorization server metadata `document` (the same origin). */
async function hostileAuthorizationServer(document: (base: string) => string): Promise<string> {
  const server: Server = createServer((request, response) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (request.url === '/.well-known/oauth-protected-resource/mcp') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [base] }));
    } else if (request.url?.startsWith('/.well-known/')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(document(base));
    } else {
      response.writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
      });
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

const metadata = (base: string, issuer: string) =>
  JSON.stringify({
    issuer,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
  });

describe('a hostile authorization server', () => {
  it('is refused when its metadata names another issuer', async () => {
    const url = await hostileAuthorizationServer((base) => metadata(base, 'https://accounts.example.com'));
    const seen: URL[] = [];
    const made = client(url, { redirect: approve(seen) });
    await made.connect();
    expect(made.status().safe?.error).toContain('names another issuer');
    expect(seen).toEqual([]);
  });

  it('is refused when its metadata is huge, and the client goes on', async () => {
    const url = await hostileAuthorizationServer((base) =>
      metadata(base, base).replace('{', `{"padding":"${'x'.repeat(11 * 1024 * 1024)}",`),
    );
    const seen: URL[] = [];
    const made = client(url, { redirect: approve(seen) });
    await made.connect();
    expect(made.status().safe?.state).not.toBe('connected');
    expect(made.status().safe?.error).toContain('MB');
    expect(seen).toEqual([]);
  });
});

describe('the token stores', () => {
  it('read a file that is not a record as no record, and replace it on the next save', async () => {
    const dir = await tempWorkspace();
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const store = fileTokenStore(dir);
    await store.save('https://a.example/mcp', { codeVerifier: 'v' });
    const [file] = await readdir(dir);
    const path = join(dir, file ?? '');
    for (const bad of ['{not json', '[]', '{"tokens":{"access_token":1}}', 'x'.repeat(MAX_RECORD_BYTES + 1)]) {
      await writeFile(path, bad);
      expect(await store.load('https://a.example/mcp')).toBeUndefined();
    }
    await store.save('https://a.example/mcp', { codeVerifier: 'w' });
    expect(await store.load('https://a.example/mcp')).toMatchObject({ codeVerifier: 'w' });
    expect(await store.load('https://b.example/mcp')).toBeUndefined();
    await store.remove('https://a.example/mcp');
    expect(await readdir(dir)).toEqual([]);
  });

  it('make the directory private even when it was there before', async () => {
    const dir = join(await tempWorkspace(), 'open');
    cleanups.push(() => rm(join(dir, '..'), { recursive: true, force: true }));
    await mkdir(dir, { mode: 0o755 });
    await fileTokenStore(dir).save('https://a.example/mcp', {});
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('may fail a write: that save fails, and the next one is made', async () => {
    const memory = memoryTokenStore();
    let refuse = true;
    const store = {
      ...memory,
      save: async (...args: Parameters<typeof memory.save>) => {
        if (refuse) throw new Error('disk full');
        await memory.save(...args);
      },
    };
    const provider = oauthProvider('https://a.example/mcp', { store });
    await expect(provider.saveTokens({ access_token: 'a', token_type: 'bearer' })).rejects.toThrow('disk full');
    refuse = false;
    await provider.saveTokens({ access_token: 'b', token_type: 'bearer' });
    expect((await memory.load('https://a.example/mcp'))?.tokens?.access_token).toBe('b');
  });

  it('in memory, keep a record per server', async () => {
    const store = memoryTokenStore();
    await store.save('https://a.example/mcp', { codeVerifier: 'v' });
    expect(await store.load('https://a.example/mcp')).toEqual({ codeVerifier: 'v' });
    expect(await store.load('https://b.example/mcp')).toBeUndefined();
  });
});

describe('auth in a config', () => {
  it('is checked with the rest, and keeps the store and redirect given in code', () => {
    const https = parseMcpServers({
      web: { url: 'https://a.example/mcp', auth: { clientMetadataUrl: 'http://a.example/c' } },
    });
    expect(https.isErr() && https.error).toMatchObject({
      key: 'servers.web.auth.clientMetadataUrl',
      message: 'must be an https:// URL',
    });
    const stdio = parseMcpServers({ local: { command: 'server', auth: {} } });
    expect(stdio.isErr() && stdio.error).toMatchObject({
      key: 'servers.local.auth',
      message: 'is for a server reached by url',
    });
    const store = memoryTokenStore();
    const redirect = approve();
    const parsed = parseMcpServers({ web: { url: 'https://a.example/mcp', auth: { store, redirect, scope: 'read' } } });
    expect(parsed.isOk() && parsed.value.web).toEqual({
      url: 'https://a.example/mcp',
      auth: { store, redirect, scope: 'read' },
    });
  });
});
