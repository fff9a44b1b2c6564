import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import {
  ErrorCode,
  McpError,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { messageOf } from '@openmanus/core';

/** What a resource's `read` or a prompt's `get` is told of the request it answers. */
export interface CatalogScope {
  /** Aborted when the client cancels the request or the session ends. */
  readonly signal: AbortSignal;
  /** The MCP session id over HTTP (none over stdio or an in-memory pair). */
  readonly sessionId?: string;
}

/**
 * What a read gives: a string (text), bytes (sent as a base64 blob), or either with its own
 * `mimeType` (else the resource's): `{ text }`, `{ blob }` (base64 already).
 */
export type ResourceContent =
  | string
  | Uint8Array
  | { readonly text: string; readonly mimeType?: string }
  | { readonly blob: string; readonly mimeType?: string };

/** A resource as `resources/list` shows it. */
export interface ResourceInfo {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** Its size in bytes, if known. */
  readonly size?: number;
}

/** A resource with a fixed URI. */
export interface McpResource extends ResourceInfo {
  read(uri: string, scope: CatalogScope): ResourceContent | Promise<ResourceContent>;
}

/**
 * Suggests values for an argument (a template variable, a prompt argument) from what the user has
 * typed so far; `context.arguments` holds the ones already filled in. At most 100 are sent.
 */
export type Completer = (
  value: string,
  context: { readonly arguments: Readonly<Record<string, string>> },
) => readonly string[] | Promise<readonly string[]>;

/** Resources named by an RFC 6570 URI template, e.g. `test://items/{id}` or `file:///srv/{+path}`. */
export interface McpResourceTemplate {
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** `vars` are the template's variables, percent-decoded. */
  read(
    uri: string,
    vars: Readonly<Record<string, string>>,
    scope: CatalogScope,
  ): ResourceContent | Promise<ResourceContent>;
  /** Resources of this template to show in `resources/list` (keep it bounded). */
  list?(scope: CatalogScope): readonly ResourceInfo[] | Promise<readonly ResourceInfo[]>;
  /** Completion of the template's variables, by name. */
  readonly complete?: Readonly<Record<string, Completer>>;
}

/**
 * An error the client gets as it is, with its code (an McpError thrown on the server has its
 * "MCP error <code>:" in the message, and the client's McpError adds it once more).
 */
export class CatalogError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The JSON-RPC error MCP specifies for a resource that does not exist. */
export const RESOURCE_NOT_FOUND = -32002;

export const notFound = (uri: string) => new CatalogError(RESOURCE_NOT_FOUND, `Resource ${uri} not found`, { uri });

/** A template with its parsed form. */
export interface CompiledTemplate {
  readonly template: McpResourceTemplate;
  readonly parsed: UriTemplate;
}

export function compileTemplate(template: McpResourceTemplate): CompiledTemplate {
  try {
    return { template, parsed: new UriTemplate(template.uriTemplate) };
  } catch (error) {
    throw new Error(`The resource template ${template.name} (${template.uriTemplate}): ${messageOf(error)}`);
  }
}

/** The template's percent-decoded variables if `uri` is one of its URIs, else undefined. */
export function matchTemplate(
  { parsed, template }: CompiledTemplate,
  uri: string,
  maxArgumentLength: number,
): Record<string, string> | undefined {
  const found = parsed.match(uri);
  if (!found) return undefined;
  const vars: Record<string, string> = {};
  for (const [name, raw] of Object.entries(found)) {
    const value = Array.isArray(raw) ? raw.join(',') : raw;
    let decoded: string;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      throw new CatalogError(
        ErrorCode.InvalidParams,
        `${uri}: the ${name} of ${template.uriTemplate} is not percent-encoded`,
      );
    }
    checkLength(`the ${name} of ${template.uriTemplate}`, decoded, maxArgumentLength);
    vars[name] = decoded;
  }
  return vars;
}

/** Refuses a value (a template variable, a prompt argument) longer than the server takes. */
export function checkLength(what: string, value: string, max: number): void {
  if (value.length > max) {
    throw new CatalogError(
      ErrorCode.InvalidParams,
      `${what} is ${value.length} characters long; this server takes at most ${max}`,
    );
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes a base64 string stands for. */
export const base64Bytes = (blob: string) =>
  Math.floor((blob.length * 3) / 4) - (blob.endsWith('==') ? 2 : blob.endsWith('=') ? 1 : 0);

/** A read's content as MCP contents, refused (an MCP error saying so) over `maxBytes`. */
export function toReadResult(
  uri: string,
  declaredType: string | undefined,
  content: ResourceContent,
  maxBytes: number,
): ReadResourceResult {
  const tooBig = (bytes: number) => {
    if (bytes > maxBytes) {
      throw new CatalogError(
        ErrorCode.InvalidRequest,
        `The resource ${uri} is ${bytes} bytes; this server sends at most ${maxBytes} bytes of a resource`,
      );
    }
  };
  const typed = (mimeType: string | undefined) => {
    const type = mimeType ?? declaredType;
    return type !== undefined ? { mimeType: type } : {};
  };
  if (typeof content === 'string') {
    tooBig(Buffer.byteLength(content));
    return { contents: [{ uri, ...typed(undefined), text: content }] };
  }
  if (content instanceof Uint8Array) {
    tooBig(content.byteLength);
    return { contents: [{ uri, ...typed(undefined), blob: Buffer.from(content).toString('base64') }] };
  }
  if (typeof content === 'object' && content !== null && 'text' in content && typeof content.text === 'string') {
    tooBig(Buffer.byteLength(content.text));
    return { contents: [{ uri, ...typed(content.mimeType), text: content.text }] };
  }
  if (typeof content === 'object' && content !== null && 'blob' in content && typeof content.blob === 'string') {
    tooBig(base64Bytes(content.blob));
    if (content.blob.length % 4 !== 0 || !BASE64.test(content.blob)) {
      throw new CatalogError(ErrorCode.InternalError, `The read of ${uri} gave a blob that is not base64`);
    }
    return { contents: [{ uri, ...typed(content.mimeType), blob: content.blob }] };
  }
  throw new CatalogError(ErrorCode.InternalError, `The read of ${uri} gave neither text nor bytes`);
}

/** An error a host's callback threw, as the MCP error the client gets (an McpError goes through as it is). */
export const asMcpError = (what: string, error: unknown) =>
  error instanceof McpError || error instanceof CatalogError
    ? error
    : new CatalogError(ErrorCode.InternalError, `${what}: ${messageOf(error)}`);

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value !== undefined ? { [key]: value } : {}) as { [P in K]?: V };

/** A resource as listed (its `read` left out). */
export const resourceListing = (info: ResourceInfo): Resource => ({
  uri: info.uri,
  name: info.name,
  ...optional('title', info.title),
  ...optional('description', info.description),
  ...optional('mimeType', info.mimeType),
  ...optional('size', info.size),
});

export const templateListing = (template: McpResourceTemplate): ResourceTemplate => ({
  uriTemplate: template.uriTemplate,
  name: template.name,
  ...optional('title', template.title),
  ...optional('description', template.description),
  ...optional('mimeType', template.mimeType),
});
