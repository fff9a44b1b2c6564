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
export interface ElicitationRequest {
  readonly message: string;
  /** A JSON Schema of `type: 'object'` whose properties are primitives (MCP's `requestedSchema`). */
  readonly schema: JsonSchema;
}

export type ElicitationAnswer = { readonly [key: string]: string | number | boolean | readonly string[] };

/** What the person did: answered (`accept` with the content), said no (`decline`), or dismissed it (`cancel`). */
export type ElicitationResult =
  | { readonly action: 'accept'; readonly content: ElicitationAnswer }
  | { readonly action: 'decline' | 'cancel' };

/** One message of a sampling request: text or an image or audio as base64. */
export interface SamplingMessage {
  readonly role: 'user' | 'assistant';
  readonly content:
    | { readonly type: 'text'; readonly text: string }
    | { readonly type: 'image' | 'audio'; readonly data: string; readonly mimeType: string };
}

/** A completion asked of a model (MCP `sampling/createMessage`). */
export interface SamplingRequest {
  readonly messages: readonly SamplingMessage[];
  readonly systemPrompt?: string;
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly stopSequences?: readonly string[];
}

export interface SamplingResult {
  readonly role: 'assistant';
  readonly content: { readonly type: 'text'; readonly text: string };
  /** The model that answered. */
  readonly model: string;
  readonly stopReason?: string;
}
