import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const script = fileURLToPath(new URL('../../../scripts/postgres.sh', import.meta.url));
const run = promisify(execFile);

export interface Postgres {
  /** A database of its own on the cluster (DBOS creates it on first launch), with the cluster's password. */
  readonly url: (database: string) => string;
  /** The cluster's port on 127.0.0.1. */
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * A throwaway cluster for one test file (scripts/postgres.sh: 127.0.0.1, a port and socket dir
 * of its own, a generated password). It throws when Postgres cannot start: these tests never skip.
 */
export async function startPostgres(): Promise<Postgres> {
  const dir = await mkdtemp(join(tmpdir(), 'openmanus-pg-'));
  const port = await freePort();
  let printed: string;
  try {
    printed = (await run('bash', [script, 'start', dir, String(port)])).stdout.trim();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(
      `could not start Postgres with scripts/postgres.sh: ${(error as { stderr?: string }).stderr ?? error}`,
    );
  }
  return {
    // The printed URL holds the password the script generated: only its database changes.
    url: (database) => {
      const url = new URL(printed);
      url.pathname = `/${database}`;
      return url.toString();
    },
    port,
    stop: async () => {
      await run('bash', [script, 'stop', dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
