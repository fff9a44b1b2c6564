import { mkdir, open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type AccessRequest, givenToken, MIN_TOKEN_LENGTH, newToken } from '@openmanus/core/internal';

/** The bearer token every request must carry, and where it came from. */
export interface ServerToken {
  readonly value: string;
  /** The file it is kept in, when it was not given by the host. */
  readonly file?: string;
  /** Made by this start (print it once: nobody knows it yet). */
  readonly created: boolean;
}

/**
 * The configured token, else the one kept in `<dataDir>/token` (0600), else a new random one
 * written there: a restart keeps it, and clients configured once stay valid.
 */
export async function resolveToken(dataDir: string, configured?: string): Promise<ServerToken> {
  if (configured !== undefined) return { value: givenToken(configured, "the server's token"), created: false };
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, 'token');
  const kept = await readKept(file);
  if (kept !== undefined) return { value: kept, file, created: false };
  const value = newToken();
  // `wx`: never through a link someone planted, never over a token another start just wrote.
  const handle = await open(file, 'wx', 0o600).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST') return undefined;
    throw error;
  });
  if (!handle) return resolveToken(dataDir);
  try {
    await handle.writeFile(`${value}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { value, file, created: true };
}

async function readKept(file: string): Promise<string | undefined> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!info) return undefined;
  if (!info.isFile()) throw new Error(`${file} is not a regular file`);
  if ((info.mode & 0o077) !== 0)
    throw new Error(`${file} can be read by other users: chmod 600 it (or delete it to make a new token)`);
  const value = (await readFile(file, 'utf8')).trim();
  if (value.length < MIN_TOKEN_LENGTH) throw new Error(`${file} holds no usable token: delete it to make a new one`);
  return value;
}

/** A fetch request as the access checks read it. */
export const accessRequestOf = (request: Request): AccessRequest => ({
  method: request.method,
  host: request.headers.get('host') ?? new URL(request.url).host,
  header: (name) => request.headers.get(name) ?? undefined,
});
