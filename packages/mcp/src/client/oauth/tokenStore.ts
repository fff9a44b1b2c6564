import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';

/** What a client keeps of its authorization with one MCP server. */
export interface McpAuthRecord {
  readonly tokens?: OAuthTokens;
  /** As registered (dynamically, by a metadata document URL, or by hand), stamped with its authorization server. */
  readonly client?: OAuthClientInformationMixed;
  /** The PKCE verifier of the authorization under way. */
  readonly codeVerifier?: string;
  /** Where the authorization server is, so that the next sign-in need not look again. */
  readonly discovery?: OAuthDiscoveryState;
}

/** Where OAuth tokens, client registrations and code verifiers are kept, by MCP server URL. */
export interface McpTokenStore {
  /** The record for a server, or undefined if there is none (or none that can be read). */
  load(serverUrl: string): Promise<McpAuthRecord | undefined>;
  /** Replaces the record for a server. */
  save(serverUrl: string, record: McpAuthRecord): Promise<void>;
  /** Forgets a server's record (a sign-out). */
  remove(serverUrl: string): Promise<void>;
}

/** Kept for the life of the process: a client signs in once per run. */
export function memoryTokenStore(): McpTokenStore {
  const records = new Map<string, McpAuthRecord>();
  return {
    load: async (serverUrl) => records.get(serverUrl),
    save: async (serverUrl, record) => {
      records.set(serverUrl, record);
    },
    remove: async (serverUrl) => {
      records.delete(serverUrl);
    },
  };
}

/** No honest record comes near this; a bigger file is not read (nor written). */
export const MAX_RECORD_BYTES = 256 * 1024;

/** Loosely checked: what the SDK wrote is the SDK's to judge, but it must at least be a record of objects. */
const RecordSchema = z.looseObject({
  tokens: z.looseObject({ access_token: z.string(), token_type: z.string() }).optional(),
  client: z.looseObject({ client_id: z.string() }).optional(),
  codeVerifier: z.string().optional(),
  discovery: z.looseObject({ authorizationServerUrl: z.string() }).optional(),
});

/**
 * One JSON file per server in `dir` (made with mode 700; files mode 600), named by a hash of the
 * server's URL. Writes are atomic (a temporary file renamed over the old one); a file that is not
 * a record — bad JSON, the wrong shape, more than 256 KB — reads as no record, and is replaced by
 * the next save.
 */
export function fileTokenStore(dir: string): McpTokenStore {
  const fileOf = (serverUrl: string) =>
    join(dir, `${createHash('sha256').update(serverUrl).digest('hex').slice(0, 32)}.json`);
  const ready = async () => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // mkdir leaves the mode of a directory that was already there.
    await chmod(dir, 0o700);
  };
  return {
    async load(serverUrl) {
      const file = fileOf(serverUrl);
      try {
        if ((await stat(file)).size > MAX_RECORD_BYTES) return undefined;
        const parsed = RecordSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
        return parsed.success ? (parsed.data as McpAuthRecord) : undefined;
      } catch {
        // Absent, unreadable or not JSON: as if there were no record.
        return undefined;
      }
    },
    async save(serverUrl, record) {
      const text = JSON.stringify({ serverUrl, ...record });
      if (Buffer.byteLength(text) > MAX_RECORD_BYTES) throw new Error('an OAuth record of more than 256 KB');
      await ready();
      const file = fileOf(serverUrl);
      const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      const handle = await open(temporary, 'wx', 0o600);
      try {
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      try {
        await rename(temporary, file);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },
    async remove(serverUrl) {
      await rm(fileOf(serverUrl), { force: true });
    },
  };
}
