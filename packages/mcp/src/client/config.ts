import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ConfigError, err, ok, type Result } from '@openmanus/core';
import { z } from 'zod';
import type { McpOAuthOptions } from './oauth/provider.js';

/** A server run as a child process, spoken to over its stdin and stdout. */
export interface StdioServerConfig {
  readonly type?: 'stdio';
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the few variables every server gets (HOME, PATH, USER, …); nothing else of ours is passed on. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** A server reached over HTTP: streamable HTTP (`http`), SSE (`sse`), or — without a type — the first of them that works. */
export interface RemoteServerConfig {
  readonly type?: 'http' | 'streamable-http' | 'streamableHttp' | 'sse';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** OAuth 2.1, for a server that answers 401: see the README's "Authorization (OAuth)". */
  readonly auth?: McpOAuthOptions;
}

export type McpServerConfig = StdioServerConfig | RemoteServerConfig;

/** Servers by id, as `mcpServers` of `config/mcp.json` lists them (the id is part of their tools' names). */
export type McpServers = Readonly<Record<string, McpServerConfig>>;

const REMOTE_TYPES = ['http', 'streamable-http', 'streamableHttp', 'sse'] as const;

const text = z.string().min(1);
const strings = z.record(z.string(), z.string());
const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https:// URL' });
/** `auth` as a config file can write it; in code, `store`, `redirect` and `prepareRedirect` are objects and functions. */
const authSchema = z
  .strictObject({
    store: z.custom<McpOAuthOptions['store']>((value) => typeof value === 'object' && value !== null).optional(),
    redirect: z.custom<McpOAuthOptions['redirect']>((value) => typeof value === 'function').optional(),
    prepareRedirect: z.custom<McpOAuthOptions['prepareRedirect']>((value) => typeof value === 'function').optional(),
    redirectUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    clientMetadataUrl: httpsUrl.optional(),
    clientMetadata: z.record(z.string(), z.unknown()).optional(),
    clientId: text.optional(),
    clientSecret: text.optional(),
    issuer: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    clientCredentials: z
      .union([
        z.strictObject({ clientId: text, clientSecret: text }),
        z.strictObject({ clientId: text, privateKey: text, algorithm: text.optional() }),
      ])
      .optional(),
    crossApp: z
      .strictObject({
        idpTokenEndpoint: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
        idpClientId: text,
        idpClientSecret: text.optional(),
        idToken: z.union([text, z.custom<() => string>((value) => typeof value === 'function')], {
          error: 'must be the ID token, or (in code) a function that gets one',
        }),
        clientId: text,
        clientSecret: text.optional(),
      })
      .optional(),
    scope: text.optional(),
  })
  .refine((auth) => !(auth.clientCredentials && auth.crossApp), {
    path: ['crossApp'],
    message: 'cannot be given with clientCredentials (each is a way to get a token)',
  });
/** One server as other MCP hosts write it; keys of theirs we do not use (e.g. `autoApprove`) are ignored. */
const serverSchema = z
  .object({
    type: z.enum(['stdio', ...REMOTE_TYPES]).optional(),
    command: text.optional(),
    args: z.array(z.string()).optional(),
    env: strings.optional(),
    cwd: text.optional(),
    url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    headers: strings.optional(),
    auth: authSchema.optional(),
    disabled: z.boolean().optional(),
  })
  .superRefine((server, context) => {
    const remote = server.type !== undefined && server.type !== 'stdio';
    const stdio = server.type === 'stdio' || (server.type === undefined && server.url === undefined);
    if (stdio && server.command === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['command'],
        message:
          server.type === 'stdio'
            ? 'is required for a stdio server (the program to run)'
            : 'is required: a command to run (a stdio server) or a url (an HTTP or SSE server)',
      });
    }
    if (remote && server.url === undefined) {
      context.addIssue({ code: 'custom', path: ['url'], message: `is required for a server of type "${server.type}"` });
    }
    if (server.auth !== undefined && server.url === undefined) {
      context.addIssue({ code: 'custom', path: ['auth'], message: 'is for a server reached by url' });
    }
    if (server.type === undefined && server.command !== undefined && server.url !== undefined) {
      context.addIssue({ code: 'custom', path: ['type'], message: 'is required when both command and url are given' });
    }
  });
const serversSchema = z.record(z.string(), serverSchema);
const fileSchema = z.object({
  mcpServers: z.record(z.string(), serverSchema, {
    error: (issue) =>
      issue.input === undefined ? 'is required: the servers by id' : 'must be an object of servers by id',
  }),
});

type ParsedServer = z.output<typeof serverSchema>;

/** The config as validated, without disabled servers and without keys we do not use. */
function toServers(parsed: Readonly<Record<string, ParsedServer>>): McpServers {
  const servers: Record<string, McpServerConfig> = {};
  for (const [id, { disabled, type, command, args, env, cwd, url, headers, auth }] of Object.entries(parsed)) {
    if (disabled) continue;
    servers[id] =
      command !== undefined && (type === undefined || type === 'stdio')
        ? { command, ...(args ? { args } : {}), ...(env ? { env } : {}), ...(cwd ? { cwd } : {}) }
        : {
            url: url ?? '',
            ...(type && type !== 'stdio' ? { type } : {}),
            ...(headers ? { headers } : {}),
            ...(auth ? { auth: auth as McpOAuthOptions } : {}),
          };
  }
  return servers;
}

function issueOf(error: z.ZodError, prefix: string): { key: string; message: string } {
  const issue = error.issues[0];
  const path = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join('.');
  return { key: path, message: issue?.message ?? 'invalid' };
}

/** Checks servers given in code; a mistake is reported with its key, e.g. `servers.web.url: must be an http:// or https:// URL`. */
export function parseMcpServers(servers: unknown, key = 'servers'): Result<McpServers, ConfigError> {
  const parsed = serversSchema.safeParse(servers);
  return parsed.success ? ok(toServers(parsed.data)) : err({ code: 'CONFIG_INVALID', ...issueOf(parsed.error, key) });
}

export interface LoadMcpConfigOptions {
  /** Where a relative path starts (default: the working directory). */
  readonly cwd?: string;
}

/**
 * Reads `mcpServers` from an mcp.json (default `config/mcp.json`, as OpenManus and other MCP hosts
 * write it). Without the default file there are no servers; a path given must exist. A mistake is
 * reported with the file and the key, e.g. `…/mcp.json: mcpServers.web.url: must be an http:// or https:// URL`.
 */
export function loadMcpConfig(path?: string, options: LoadMcpConfigOptions = {}): Result<McpServers, ConfigError> {
  const file = resolve(options.cwd ?? process.cwd(), path ?? 'config/mcp.json');
  if (!existsSync(file))
    return path === undefined ? ok({}) : err({ code: 'CONFIG_INVALID', file, message: 'the file does not exist' });
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return err({
      code: 'CONFIG_INVALID',
      file,
      message: `not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  const parsed = fileSchema.safeParse(raw);
  return parsed.success
    ? ok(toServers(parsed.data.mcpServers))
    : err({ code: 'CONFIG_INVALID', file, ...issueOf(parsed.error, '') });
}
