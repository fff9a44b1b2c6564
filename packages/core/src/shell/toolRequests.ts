// What a running tool may tell or ask beyond its result: progress, log lines, a question with a
// schema for a person (elicitation), a completion from a model (sampling). MCP carries each; in a
// run of our own they become run items and host callbacks.
import type { JsonSchema } from '../kernel/tool.js';

/** How far a call has got: `progress` out of `total` (when known), with a word on what it does. */
export interface ToolProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** The syslog levels MCP's logging uses. */
export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

export const LOG_LEVELS: readonly LogLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** A question for a person with the shape of the answer: a flat object of strings, numbers, booleans, enums. */
export interface FormElicitationRequest {
  readonly mode?: 'form';
  readonly message: string;
  /** A JSON Schema of `type: 'object'` whose properties are primitives (MCP's `requestedSchema`). */
  readonly schema: JsonSchema;
}

/**
 * A request that a person open a URL and do something there (sign in, pay, consent) that must not
 * pass through the client: MCP's URL mode. The URL is the asking server's text, never to be opened
 * without the person's say.
 */
export interface UrlElicitationRequest {
  readonly mode: 'url';
  readonly message: string;
  /** An `http:` or `https:` URL. */
  readonly url: string;
  /** The server's id of this request; its `notifications/elicitation/complete` names it. */
  readonly elicitationId: string;
  /** The MCP server that sent it, when it came from one: show the URL as that server's. */
  readonly server?: string;
}

/** A form to fill in, or a URL to open (`mode: 'url'`). */
export type ElicitationRequest = FormElicitationRequest | UrlElicitationRequest;

export type ElicitationAnswer = { readonly [key: string]: string | number | boolean | readonly string[] };

/**
 * What the person did: answered (`accept` with the content), said no (`decline`), or dismissed it
 * (`cancel`). For a URL, `accept` says they agreed to open it; its content is empty (`{}`).
 */
export type ElicitationResult =
  | { readonly action: 'accept'; readonly content: ElicitationAnswer }
  | { readonly action: 'decline' | 'cancel' };

export interface SamplingText {
  readonly type: 'text';
  readonly text: string;
}

/** An image or audio as base64. */
export interface SamplingMedia {
  readonly type: 'image' | 'audio';
  readonly data: string;
  readonly mimeType: string;
}

/** A call the model asked for of one of the request's `tools`: the requester runs it, never the model's host. */
export interface SamplingToolUse {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  readonly input: { readonly [key: string]: unknown };
}

/** What the requester's run of a `tool_use` gave, sent back in a later request. */
export interface SamplingToolResult {
  readonly type: 'tool_result';
  /** The `id` of the `tool_use` it answers. */
  readonly toolUseId: string;
  readonly content: readonly (SamplingText | SamplingMedia)[];
  readonly isError?: boolean;
}

export type SamplingContent = SamplingText | SamplingMedia | SamplingToolUse | SamplingToolResult;

/** One message of a sampling request: a block of content, or several (tool calls and their results). */
export interface SamplingMessage {
  readonly role: 'user' | 'assistant';
  readonly content: SamplingContent | readonly SamplingContent[];
}

/** A tool the model may ask to call while it answers a sampling request (MCP's `Tool`, as far as a model reads it). */
export interface SamplingTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
}

/** A completion asked of a model (MCP `sampling/createMessage`). */
export interface SamplingRequest {
  readonly messages: readonly SamplingMessage[];
  readonly systemPrompt?: string;
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly stopSequences?: readonly string[];
  /** Tools the model may ask to call; the calls come back in the result's `toolUse`, not run. */
  readonly tools?: readonly SamplingTool[];
  /** Whether the model may (`auto`, the default), must (`required`) or must not (`none`) call them. */
  readonly toolChoice?: 'auto' | 'required' | 'none';
}

export interface SamplingResult {
  readonly role: 'assistant';
  /** The reply's text (empty when the model only called tools). */
  readonly content: SamplingText;
  /** The calls of the request's tools the model asked for (`stopReason: 'toolUse'`), for the requester to run. */
  readonly toolUse?: readonly SamplingToolUse[];
  /** The model that answered. */
  readonly model: string;
  readonly stopReason?: string;
}
