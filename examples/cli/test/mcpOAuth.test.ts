// `openmanus mcp` and a server that asks for OAuth: the built CLI prints the authorization URL, the
// test plays the browser (follows it to the authorization server, which grants at once, and back to
// the CLI's listener on 127.0.0.1), and the tokens stay in the user's config dir for the next run.
import { readdir, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProtectedServer, startProtectedServer } from '../../../packages/mcp/test/fixtures/oauthServer.js';
import { runNode, scriptedModels, tempDir } from './helpers.js';

const endpoint = scriptedModels();

let server: ProtectedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The browser: once the CLI prints the URL, a forged redirect (refused), then the real one. */
function browser(child: { stderr: NodeJS.ReadableStream | null }, answers: number[]) {
  let text = '';
  let done = false;
  child.stderr?.on('data', async (chunk: Buffer) => {
    text += chunk.toString();
    const url = /^ {2}(http:\/\/\S+)$/m.exec(text)?.[1];
    if (done || !url) return;
    done = true;
    const granted = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
    const forged = new URL(granted);
    forged.searchParams.set('state', 'forged');
    answers.push((await fetch(forged)).status, (await fetch(granted)).status);
  });
}

const script = () => [
  { toolCalls: [{ name: 'mcp_server_whoami', arguments: {} }] },
  { content: 'Known.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
];

describe('openmanus mcp and OAuth', () => {
  it('signs in through the browser once, and keeps the tokens in the config dir', async () => {
    server = await startProtectedServer();
    const { env } = await endpoint([...script(), ...script()]);
    const config = await tempDir();
    const port = String(await freePort());
    const args = ['mcp', '-c', 'http', '--server-url', server.url, '--callback-port', port, '-p', 'Who am I?'];
    const answers: number[] = [];
    const first = await runNode('cli.js', args, {
      env: { ...env, XDG_CONFIG_HOME: config },
      onStart: (child) => browser(child, answers),
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('Known.\n');
    expect(first.stderr).toContain(`openmanus mcp: ${server.url} asks you to sign in. Open this in your browser:\n`);
    expect(first.stderr).toContain(`redirect_uri=${encodeURIComponent(`http://127.0.0.1:${port}/callback`)}`);
    expect(answers).toEqual([400, 200]);

    const tokens = join(config, 'openmanus', 'mcp-tokens');
    expect((await stat(tokens)).mode & 0o777).toBe(0o700);
    const files = await readdir(tokens);
    expect(files).toHaveLength(1);
    expect((await stat(join(tokens, files[0] ?? ''))).mode & 0o777).toBe(0o600);

    const second = await runNode('cli.js', args, { env: { ...env, XDG_CONFIG_HOME: config } });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe('Known.\n');
    expect(second.stderr).not.toContain('sign in');
    expect(server.stats.authorizations).toHaveLength(1);
  });

  it('--callback-port is checked, and is only for a server at a URL', async () => {
    const { server: model, env } = await endpoint([]);
    const bad = await runNode('cli.js', ['mcp', '-c', 'http', '--callback-port', 'x', '-p', 'x'], { env });
    expect([bad.code, bad.stderr]).toEqual([2, 'openmanus mcp: --callback-port must be a port number, got "x"\n']);
    const stdio = await runNode('cli.js', ['mcp', '--callback-port', '9000', '-p', 'x'], { env });
    expect([stdio.code, stdio.stderr]).toEqual([
      2,
      'openmanus mcp: --callback-port is for a server at a URL, without --token\n',
    ]);
    expect(model.requests).toEqual([]);
  });
});
