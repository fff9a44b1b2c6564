// The OAuth snippets of the README and of the site's MCP guide, run with node as a user would,
// against the fixture's authorization server and protected MCP server on 127.0.0.1 (only the
// servers' URLs changed, and HOME a temp dir): the test is the person who opens the printed URL,
// the authorization server approves at once and sends the browser back to the snippet's loopback
// listener; the snippet then prints the tools it got, and its token file is there, mode 600.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { markdownOf, readmeOf, snippetDirs } from '../../core/test/readmeCheck.js';
import { type ProtectedServer, startProtectedServer } from './fixtures/oauthServer.js';
import { packageDir, tempWorkspace } from './helpers.js';

const readme = await readmeOf(packageDir);
const guide = await markdownOf(join(packageDir, '../../docs/src/content/docs/guides/mcp.md'));
const snippetDir = snippetDirs(packageDir);
const REPORTS = { clientId: 'nightly', clientSecret: 'reports-s3cret' };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function protectedServer(options?: Parameters<typeof startProtectedServer>[0]): Promise<ProtectedServer> {
  const server = await startProtectedServer(options);
  cleanups.push(() => server.close());
  return server;
}

/** A URL on 127.0.0.1 where nothing listens: a server the snippet names that we do not run. */
async function nobodyUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return `http://127.0.0.1:${port}/mcp`;
}

/** A HOME of its own, for the token files the snippet writes under ~/.config. */
async function home(): Promise<string> {
  const dir = await tempWorkspace();
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Runs `code` with node from a directory inside the package (as readmeCheck's snippets run), and
 * signs in as a person would: each "Sign in at <url>" it prints is opened, and the authorization
 * server's redirect followed to the snippet's listener. Resolves with its lines once it exits with 0.
 */
async function runSigningIn(code: string, env: Record<string, string>): Promise<string[]> {
  const dir = await snippetDir({ 'snippet.mts': code });
  const child = spawn(process.execPath, ['snippet.mts'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill();
      await once(child, 'exit');
    }
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit');
  const lines: string[] = [];
  const signIns: Promise<unknown>[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    lines.push(line);
    const url = /^Sign in at (\S+)$/.exec(line)?.[1];
    if (url === undefined) continue;
    signIns.push(
      (async () => {
        const approved = await fetch(url, { redirect: 'manual' });
        await fetch(approved.headers.get('location') ?? '');
      })(),
    );
  }
  await Promise.all(signIns);
  const [exitCode] = await exited;
  expect({ exitCode, stderr }).toEqual({ exitCode: 0, stderr: '' });
  return lines;
}

/** The token files under `home`'s ~/.config/my-app/mcp-tokens, by their mode, and the directory's. */
async function tokenFiles(homeDir: string) {
  const dir = join(homeDir, '.config', 'my-app', 'mcp-tokens');
  const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);
  const files = await readdir(dir);
  return { dir: await mode(dir), files: await Promise.all(files.map((file) => mode(join(dir, file)))) };
}

describe('the OAuth snippets, run', () => {
  it('the README signs the person in to one server and the machine in to another, and keeps the tokens', async () => {
    const tracker = await protectedServer();
    const reports = await protectedServer({ clientCredentials: REPORTS });
    const code = readme
      .block('## Authorization (OAuth)', 'ts')
      .replace('https://mcp.example.com/mcp', tracker.url)
      .replace('https://reports.example.com/mcp', reports.url)
      .replace('https://wiki.example.com/mcp', await nobodyUrl());
    const homeDir = await home();
    // The secrets it reads from the environment, as its user has them (the wiki is not reached).
    const secrets = { REPORTS_SECRET: REPORTS.clientSecret, IDP_SECRET: 'idp-s3cret', WIKI_SECRET: 'wiki-s3cret' };
    const lines = await runSigningIn(code, { HOME: homeDir, ...secrets });
    expect(lines).toEqual([expect.stringMatching(/^Sign in at /), "[ 'mcp_tracker_whoami', 'mcp_reports_whoami' ]"]);
    expect(tracker.stats).toMatchObject({ registrations: 1, codeExchanges: 1 });
    expect(reports.stats).toMatchObject({ clientCredentialGrants: 1, codeExchanges: 0 });
    // Only the person's tokens go to the file store; the machine's stay in memory.
    expect(await tokenFiles(homeDir)).toEqual({ dir: '700', files: ['600'] });
  });

  it("the guide's snippet signs the person in and keeps the tokens", async () => {
    const tracker = await protectedServer();
    const code = guide
      .block('## Servers that need a sign-in (OAuth)', 'ts')
      .replace('https://mcp.example.com/mcp', tracker.url);
    const homeDir = await home();
    const lines = await runSigningIn(code, { HOME: homeDir });
    expect(lines).toEqual([expect.stringMatching(/^Sign in at /), "[ 'mcp_tracker_whoami' ]"]);
    expect(tracker.stats).toMatchObject({ registrations: 1, codeExchanges: 1 });
    expect(await tokenFiles(homeDir)).toEqual({ dir: '700', files: ['600'] });
  });
});
