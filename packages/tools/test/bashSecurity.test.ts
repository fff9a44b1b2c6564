// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings with ${...} in them are bash, not JavaScript.
// The bash tool against a hostile model: what its commands must not see, reach or leave behind.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createLocalSandboxProvider } from '@openmanus/core';
import { type ToolSession, toolSession } from '@openmanus/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BashOptions, createBash } from '../src/bash/bashTool.js';
import { tempWorkspace } from './helpers.js';

const isRoot = process.getuid?.() === 0;
const bwrapWorks = (() => {
  try {
    execFileSync('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let workspace: string;
let sessions: ToolSession[];
beforeEach(async () => {
  workspace = await tempWorkspace();
  sessions = [];
});
afterEach(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  await rm(workspace, { recursive: true, force: true });
});

const shell = (options: BashOptions = {}) => {
  const session = toolSession(createBash({ workspace, ...options }));
  sessions.push(session);
  return session;
};

describe.each([
  { name: 'no sandbox', options: { sandbox: 'none' as const }, runs: true },
  { name: 'bubblewrap', options: { sandbox: 'bwrap' as const }, runs: bwrapWorks },
  { name: 'the default', options: {}, runs: true },
  {
    name: 'the local sandbox provider, bubblewrap',
    options: { sandboxProvider: createLocalSandboxProvider({ isolation: 'bwrap' }) },
    runs: bwrapWorks,
  },
  {
    name: 'the local sandbox provider, no bubblewrap',
    options: { sandboxProvider: createLocalSandboxProvider({ isolation: 'none' }) },
    runs: true,
  },
])('the host environment under $name', ({ options, runs }) => {
  it.runIf(runs)("stays out of the shell's: no API key in any variable", async () => {
    const secret = `sk-test-secret-${randomUUID()}`;
    process.env.OPENAI_API_KEY = secret;
    process.env.ANTHROPIC_API_KEY = secret;
    try {
      const result = await shell(options).call({
        command:
          'env; echo "openai=${OPENAI_API_KEY:-none} anthropic=${ANTHROPIC_API_KEY:-none}"; declare -p | grep -c sk-test',
      });
      expect(result.output).not.toContain(secret);
      expect(result.output).toMatch(/\nopenai=none anthropic=none\n0\n\[exit code 1\]$/);
    } finally {
      delete process.env.OPENAI_API_KEY;
      delete process.env.ANTHROPIC_API_KEY;
    }
  });
});

describe.runIf(bwrapWorks).each([
  { name: "the tool's own", sandboxed: (): BashOptions => ({ sandbox: 'bwrap' }) },
  {
    name: "the local sandbox provider's",
    sandboxed: (): BashOptions => ({ sandboxProvider: createLocalSandboxProvider({ isolation: 'bwrap', workspace }) }),
  },
])('a shell under bubblewrap ($name)', ({ sandboxed }) => {
  let outside: string;
  let server: Server;
  let port: number;
  let received: string[];
  beforeEach(async () => {
    // Outside the workspace and outside /tmp (which the sandbox replaces with its own).
    outside = await mkdtemp('/var/tmp/openmanus-outside-');
    received = [];
    server = createServer((socket) => socket.on('data', (data) => received.push(String(data).trim())));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as import('node:net').AddressInfo).port;
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(outside, { recursive: true, force: true });
  });

  const breakOut = () =>
    [
      'echo inside > inside.txt && echo "workspace: written"',
      `{ echo escaped > ${outside}/file.txt; } 2>/dev/null && echo "outside: written" || echo "outside: refused"`,
      '{ echo escaped > /usr/local/evil; } 2>/dev/null && echo "system: written" || echo "system: refused"',
      `{ echo hello > /dev/tcp/127.0.0.1/${port}; } 2>/dev/null && echo "network: reached" || echo "network: refused"`,
      `[ -e /proc/${process.pid}/environ ] && echo "host process: visible" || echo "host process: hidden"`,
    ].join('\n');

  it('writes only in the workspace, reaches no network and sees no host process', async () => {
    // The same commands without the sandbox reach what its uid may (as root: a separate unprivileged
    // one, so no files outside the workspace): what bubblewrap prevents is real.
    const plain = await shell({ sandbox: 'none' }).call({ command: breakOut() });
    const files = isRoot ? 'outside: refused\nsystem: refused' : 'outside: written\nsystem: written';
    expect(plain.output).toBe(`workspace: written\n${files}\nnetwork: reached\nhost process: visible\n[exit code 0]`);
    await rm('/usr/local/evil', { force: true });
    await rm(join(outside, 'file.txt'), { force: true });
    const confined = await shell(sandboxed()).call({ command: breakOut() });
    expect(confined.output).toBe(
      'workspace: written\noutside: refused\nsystem: refused\nnetwork: refused\nhost process: hidden\n[exit code 0]',
    );
    expect(existsSync(join(outside, 'file.txt'))).toBe(false);
    expect(existsSync('/usr/local/evil')).toBe(false);
    expect(received).toEqual(['hello']);
  });

  it('cannot make a setuid program in the workspace', async () => {
    const result = await shell(sandboxed()).call({
      command: 'cp /bin/true suid; chmod 6755 suid 2>/dev/null || echo refused; stat -c %a suid',
    });
    // The sandbox's seccomp filter refuses the bits (and the workspace is stripped of any after).
    expect(result.output).toBe('refused\n755\n[exit code 0]');
    expect((await stat(join(workspace, 'suid'))).mode & 0o7777).toBe(0o755);
  });
});
