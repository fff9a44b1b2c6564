import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { err, messageOf, ok, type Result } from '@openmanus/core';
import {
  createDurableClient,
  DecisionKeyError,
  type DurableClient,
  type DurableClientOptions,
  generateDecisionKey,
} from '@openmanus/durable';
import { failure } from './options.js';
import type { SessionIo } from './session.js';

/** The options a durable command takes for its database and its decision key (parseArgs values). */
export interface DurableValues {
  readonly 'database-url'?: string | boolean;
  readonly 'database-url-file'?: string | boolean;
  readonly 'key-file'?: string | boolean;
}

/** The parseArgs options of `DurableValues`. */
export const durableArgs = {
  'database-url': { type: 'string' },
  'database-url-file': { type: 'string' },
  'key-file': { type: 'string' },
} as const;

/** The usage lines of `durableArgs`. */
export const durableUsage = `  --database-url <url>  the workers' Postgres database (default: $OPENMANUS_DATABASE_URL); a
                        password given here is readable by every local user (the process's
                        arguments): put the URL in $OPENMANUS_DATABASE_URL or a file instead
  --database-url-file <file>
                        the URL read from a file (keep it 0600)
  --key-file <file>     the workers' decision key, which approvals, answers and cancels are
                        signed with (default: $OPENMANUS_DURABLE_KEY, else the file
                        $OPENMANUS_DURABLE_KEY_FILE, else ~/.openmanus/durable.key)`;

// A URL or a key is short: a file much longer is not one (and is not read whole).
const MAX_SECRET_FILE = 16 * 1024;

const text = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);

/**
 * The Postgres database the workers and clients share: `--database-url`, else the file
 * `--database-url-file`, else `$OPENMANUS_DATABASE_URL`. A password on the command line is
 * readable in /proc by every local user: it is taken, with a warning.
 */
export function databaseUrlOption(values: DurableValues, io: SessionIo): Result<string, string> {
  const given = text(values['database-url']);
  const file = text(values['database-url-file']);
  if (given !== undefined && file !== undefined)
    return err('--database-url and --database-url-file do not go together');
  let url = given ?? io.env.OPENMANUS_DATABASE_URL;
  if (file !== undefined) {
    const read = readSecretFile(file, '--database-url-file');
    if (read.isErr()) return err(read.error.message);
    url = read.value;
  }
  if (!url)
    return err(
      '--database-url is required (or set OPENMANUS_DATABASE_URL), e.g. postgresql://postgres@127.0.0.1:5433/openmanus',
    );
  if (!/^postgres(ql)?:\/\//.test(url) || !URL.canParse(url))
    return err(`the database URL must be a postgresql:// URL, got "${redacted(url)}"`);
  if (given !== undefined && new URL(url).password)
    io.stderr.write(
      'openmanus: warning: the password in --database-url is readable by every local user (/proc/<pid>/cmdline); set OPENMANUS_DATABASE_URL or use --database-url-file\n',
    );
  return ok(url);
}

/** The URL without its password, for messages. */
const redacted = (url: string) => url.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');

/** Where the decision key is: `$OPENMANUS_DURABLE_KEY` itself, else a file (`--key-file`, `$OPENMANUS_DURABLE_KEY_FILE`, the default). */
function keySource(
  values: DurableValues,
  io: SessionIo,
): { readonly key: string } | { readonly file: string; readonly explicit: boolean } {
  const file = text(values['key-file']) ?? io.env.OPENMANUS_DURABLE_KEY_FILE;
  const key = io.env.OPENMANUS_DURABLE_KEY;
  if (file === undefined && key) return { key };
  return { file: file ?? join(io.env.HOME || homedir(), '.openmanus', 'durable.key'), explicit: file !== undefined };
}

/** A client's decision key, when it has one: without, it can read and enqueue but not decide. */
export function decisionKeyOption(values: DurableValues, io: SessionIo): Result<string | undefined, string> {
  const source = keySource(values, io);
  if ('key' in source) return ok(source.key);
  const read = readSecretFile(source.file, 'the decision key file');
  if (read.isOk()) return ok(read.value);
  if (!read.error.missing) return err(read.error.message);
  return source.explicit ? err(`the decision key file ${source.file} does not exist`) : ok(undefined);
}

/** A worker's decision key: a key file that does not exist yet is made (0600, in a 0700 directory), and `created` names it. */
export function workerKeyOption(
  values: DurableValues,
  io: SessionIo,
): Result<{ readonly key: string; readonly created?: string }, string> {
  const source = keySource(values, io);
  if ('key' in source) return ok({ key: source.key });
  const read = readSecretFile(source.file, 'the decision key file');
  if (read.isOk()) return ok({ key: read.value });
  if (!read.error.missing) return err(read.error.message);
  const key = generateDecisionKey();
  try {
    mkdirSync(dirname(source.file), { recursive: true, mode: 0o700 });
    const fd = openSync(source.file, 'wx', 0o600);
    try {
      writeSync(fd, `${key}\n`);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return err(`could not create the decision key file ${source.file}: ${messageOf(error)}`);
  }
  return ok({ key, created: source.file });
}

/** Why a secret file could not be read; `missing` when it does not exist. */
interface SecretFileError {
  readonly message: string;
  readonly missing?: boolean;
}

/**
 * A secret read from a file, trimmed: the file must be ours and readable by no one else (as ssh
 * asks of a private key), and short. `missing` when there is no such file.
 */
function readSecretFile(file: string, what: string): Result<string, SecretFileError> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    const missing = (error as { code?: string }).code === 'ENOENT';
    return err({ message: `could not read ${what} ${file}: ${messageOf(error)}`, missing });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return err({ message: `${what} ${file} is not a file` });
    if (process.getuid && stat.uid !== process.getuid()) return err({ message: `${what} ${file} is not yours` });
    if ((stat.mode & 0o077) !== 0) return err({ message: `${what} ${file} is readable by others: chmod 600 ${file}` });
    const buffer = Buffer.alloc(MAX_SECRET_FILE + 1);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    if (length > MAX_SECRET_FILE) return err({ message: `${what} ${file} is over ${MAX_SECRET_FILE} bytes` });
    const value = buffer.subarray(0, length).toString('utf8').trim();
    return value ? ok(value) : err({ message: `${what} ${file} is empty` });
  } finally {
    closeSync(fd);
  }
}

/** The name `openmanus worker` serves its planning flow under, and `openmanus enqueue --flow` queues it by. */
export const DURABLE_FLOW = 'planning';

/** This CLI's version: the default application version of its workers (a new release may replay differently). */
export const cliVersion = (): string =>
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** What a durable client connects with. */
export interface DurableConnection {
  readonly databaseUrl: string;
  readonly decisionKey?: string;
}

/** The database and, when there is one, the decision key of a client command; a message when either is wrong. */
export function connectionOf(values: DurableValues, io: SessionIo): Result<DurableConnection, string> {
  const databaseUrl = databaseUrlOption(values, io);
  if (!databaseUrl.isOk()) return err(databaseUrl.error);
  const key = decisionKeyOption(values, io);
  if (!key.isOk()) return err(key.error);
  return ok({ databaseUrl: databaseUrl.value, ...(key.value ? { decisionKey: key.value } : {}) });
}

/** `connectionOf` then `withConnectedClient`: a bad option exits 2. */
export async function withDurableClient(
  io: SessionIo,
  command: string,
  values: DurableValues,
  work: (client: DurableClient) => Promise<number>,
  options: Omit<DurableClientOptions, 'databaseUrl' | 'decisionKey'> = {},
): Promise<number> {
  const connection = connectionOf(values, io);
  if (!connection.isOk()) return failure(io, command)(connection.error);
  return withConnectedClient(io, command, connection.value, work, options);
}

/**
 * Connects a durable client for `work`, and closes it after; a failed connection or a failure of
 * `work` exits 1.
 */
export async function withConnectedClient(
  io: SessionIo,
  command: string,
  connection: DurableConnection,
  work: (client: DurableClient) => Promise<number>,
  options: Omit<DurableClientOptions, 'databaseUrl' | 'decisionKey'> = {},
): Promise<number> {
  const fail = failure(io, command);
  // DBOS's use of the pg driver draws a DeprecationWarning (a query sent while one runs) that no
  // user can act on; this process's stderr is for the command's own messages.
  process.noDeprecation = true;
  let client: DurableClient;
  try {
    client = await createDurableClient({ ...options, ...connection });
  } catch (error) {
    return fail(`could not connect: ${messageOf(error)}`, 1);
  }
  try {
    return await work(client);
  } catch (error) {
    if (error instanceof DecisionKeyError && !connection.decisionKey)
      return fail(
        'deciding for a run needs the workers\u2019 decision key: set OPENMANUS_DURABLE_KEY, or give --key-file (`openmanus worker` keeps it in ~/.openmanus/durable.key)',
        1,
      );
    return fail(messageOf(error), 1);
  } finally {
    await client.close();
  }
}
