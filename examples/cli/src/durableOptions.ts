import { readFileSync } from 'node:fs';
import { err, ok, type Result } from '@openmanus/core';
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

/** This CLI's version: the default application version of its workers (a new release may replay differently). */
export const cliVersion = (): string =>
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
