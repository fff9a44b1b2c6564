import { spawn } from 'node:child_process';
import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findChrome } from '@openmanus/browser';
import { type OpenAiServer, type RecordedRequest, type ScriptEntry, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach } from 'vitest';

export const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));
export const tempDir = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-cli-')));

/**
 * For a test file: `endpoint(script)` starts a scripted model server and gives the environment that
 * points the CLI at it; every server is closed after each test.
 */
export function scriptedModels() {
  const servers: OpenAiServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (script: ScriptEntry<RecordedRequest>[]) => {
    const server = await startOpenAiServer({ script });
    servers.push(server);
    return { server, env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL } };
  };
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a built script as a user would, with a clean environment (no keys from this machine). */
export function runNode(
  script: string,
  args: string[],
  options: {
    env?: Record<string, string>;
    cwd?: string;
    input?: string;
    onStart?: (child: ReturnType<typeof spawn>) => void;
  } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [dist(script), ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
    options.onStart?.(child);
  });
}

/** The system's Chrome or Chromium; without one the browser tests are skipped, except in CI. */
export function chromePath(): string | undefined {
  try {
    return findChrome(undefined, process.env);
  } catch (error) {
    if (process.env.CI) throw error;
    console.warn(`\n*** CLI browser tests skipped: ${(error as Error).message} ***\n`);
    return undefined;
  }
}
