import { readFileSync } from 'node:fs';
import { err, messageOf, ok, type Result } from '@openmanus/core';
import { createDurableClient, type DurableClient, type DurableClientOptions } from '@openmanus/durable';
import { failure } from './options.js';
import type { SessionIo } from './session.js';

/** `--database-url`, else `$OPENMANUS_DATABASE_URL`: the Postgres database the workers and clients share. */
export function databaseUrlOption(value: string | undefined, io: SessionIo): Result<string, string> {
  const url = value ?? io.env.OPENMANUS_DATABASE_URL;
  if (!url)
    return err(
      '--database-url is required (or set OPENMANUS_DATABASE_URL), e.g. postgresql://postgres@127.0.0.1:5433/openmanus',
    );
  return /^postgres(ql)?:\/\//.test(url) && URL.canParse(url)
    ? ok(url)
    : err(`--database-url must be a postgresql:// URL, got "${url}"`);
}

/** The name `openmanus worker` serves its planning flow under, and `openmanus enqueue --flow` queues it by. */
export const DURABLE_FLOW = 'planning';

/** This CLI's version: the default application version of its workers (a new release may replay differently). */
export const cliVersion = (): string =>
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * Connects a durable client to `--database-url` (or `$OPENMANUS_DATABASE_URL`) for `work`, and
 * closes it after; a bad URL exits 2, a failed connection or a failure of `work` exits 1.
 */
export async function withDurableClient(
  io: SessionIo,
  command: string,
  databaseUrl: string | undefined,
  work: (client: DurableClient) => Promise<number>,
  options: Omit<DurableClientOptions, 'databaseUrl'> = {},
): Promise<number> {
  const fail = failure(io, command);
  const url = databaseUrlOption(databaseUrl, io);
  if (!url.ok) return fail(url.error);
  // DBOS's use of the pg driver draws a DeprecationWarning (a query sent while one runs) that no
  // user can act on; this process's stderr is for the command's own messages.
  process.noDeprecation = true;
  let client: DurableClient;
  try {
    client = await createDurableClient({ ...options, databaseUrl: url.value });
  } catch (error) {
    return fail(`could not connect: ${messageOf(error)}`, 1);
  }
  try {
    return await work(client);
  } catch (error) {
    return fail(messageOf(error), 1);
  } finally {
    await client.close();
  }
}
