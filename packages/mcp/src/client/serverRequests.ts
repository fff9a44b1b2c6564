import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type ClientCapabilities,
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  ElicitRequestSchema,
  type ElicitResult,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type Progress,
  type Root,
} from '@modelcontextprotocol/sdk/types.js';
import type {
  ElicitationRequest,
  ElicitationResult,
  JsonSchema,
  LogLevel,
  SamplingMessage,
  SamplingRequest,
  SamplingResult,
  ToolScope,
} from '@openmanus/core';
import { checkElicitationAnswer, withSchemaDefaults } from './elicitationAnswer.js';
import { type JsonLimits, jsonExcess } from './jsonBounds.js';

/** What a client declares: form elicitation (defaults applied, SEP-1034), sampling (text, no tools), roots. */
export const CLIENT_CAPABILITIES: ClientCapabilities = {
  elicitation: { form: { applyDefaults: true } },
  sampling: {},
  roots: { listChanged: true },
};

/** The longest question, system prompt or progress message we pass on; a server's text is cut there. */
export const MAX_MESSAGE_CHARS = 10_000;
/** The most a requested schema may be (MCP's are flat objects of primitives: far smaller). */
export const MAX_ELICITATION_SCHEMA: JsonLimits = { depth: 8, chars: 50_000 };
/** The most messages a sampling request may have, and the most text they may carry together. */
export const MAX_SAMPLING_MESSAGES = 100;
export const MAX_SAMPLING_CHARS = 500_000;
/** The largest image or audio of a sampling message, as base64. */
export const MAX_SAMPLING_MEDIA_CHARS = 7_000_000;
/** The most tokens a server may ask the run's model to write. */
export const MAX_SAMPLING_TOKENS = 32_000;
/** How much of a log line's data we keep (it goes into the run's items). */
export const MAX_LOG_DATA: JsonLimits = { depth: 16, chars: 20_000 };
/** The most log lines, and progress reports, of one call that become run items. */
export const MAX_ITEMS_PER_CALL = 1_000;

/** Which server a request or log line came from, and how many of our calls were in flight on it. */
export interface McpRequestContext {
  readonly server: string;
  readonly callsInFlight: number;
}

/** A server's log line that belongs to no one call of ours (none in flight, or several). */
export interface McpLogEntry {
  readonly server: string;
  readonly level: LogLevel;
  readonly data: unknown;
  readonly logger?: string;
}

/** The client's own answers to server requests that no single tool call can take. */
export interface ServerRequestFallbacks {
  /** Answers an `elicitation/create` that came while no call, or several, were in flight (without it: declined). */
  readonly onElicitation?: (
    request: ElicitationRequest,
    context: McpRequestContext,
  ) => Promise<ElicitationResult> | ElicitationResult;
  /** Answers a `sampling/createMessage` that came while no call, or several, were in flight (without it: refused). */
  readonly onSampling?: (
    request: SamplingRequest,
    context: McpRequestContext,
  ) => Promise<SamplingResult> | SamplingResult;
  /** A server's `notifications/message` outside one call of ours (during one, it is that call's `scope.log`). */
  readonly onLog?: (entry: McpLogEntry) => void;
}

/**
 * The tool calls in flight on one connection. A server's question or log line carries nothing that
 * names the call it belongs to (the SDK does not tell which stream it came on, and a server may send
 * it on its standalone stream), so it goes to the call only when exactly one is in flight.
 */
export class CallsInFlight {
  /** Each call, with how many of its log lines and progress reports were passed on. */
  readonly #calls = new Map<ToolScope, { lines: number; reports: number }>();

  /** Counts `scope` in flight until the returned function is called. */
  add(scope: ToolScope): () => void {
    this.#calls.set(scope, { lines: 0, reports: 0 });
    return () => this.#calls.delete(scope);
  }

  get size(): number {
    return this.#calls.size;
  }

  /** The one call in flight, if there is exactly one. */
  only(): ToolScope | undefined {
    return this.#calls.size === 1 ? [...this.#calls.keys()][0] : undefined;
  }

  all(): readonly ToolScope[] {
    return [...this.#calls.keys()];
  }

  /** A log line of the server for `scope` (while in flight), up to `MAX_ITEMS_PER_CALL` of them. */
  log(scope: ToolScope, level: LogLevel, data: unknown, logger?: string): void {
    const counts = this.#calls.get(scope);
    if (!counts) return;
    counts.lines++;
    if (counts.lines <= MAX_ITEMS_PER_CALL) scope.log(level, data, logger);
    else if (counts.lines === MAX_ITEMS_PER_CALL + 1)
      scope.log(
        'warning',
        `The server sent more than ${MAX_ITEMS_PER_CALL} log lines in this call; the rest are not kept.`,
        NOTE_LOGGER,
      );
  }

  /** A progress report of the server for `scope` (while in flight), up to `MAX_ITEMS_PER_CALL` of them. */
  progress(scope: ToolScope, progress: Progress): void {
    const counts = this.#calls.get(scope);
    if (!counts) return;
    counts.reports++;
    if (counts.reports <= MAX_ITEMS_PER_CALL) scope.reportProgress(progressOf(progress));
  }
}

/** The logger of the lines we add to a call's log ourselves. */
const NOTE_LOGGER = 'openmanus-mcp';

export interface ServerRequestOptions extends ServerRequestFallbacks {
  readonly server: string;
  readonly calls: CallsInFlight;
  /** The roots now (for `roots/list`). */
  readonly roots: () => readonly Root[];
}

const cut = (text: string, max = MAX_MESSAGE_CHARS) =>
  text.length > max ? `${text.slice(0, max)}…[cut at ${max} characters]` : text;

/**
 * Answers what a server asks of us during a session: `elicitation/create` goes to the call in flight's
 * `scope.elicit` (the run's host answers), `sampling/createMessage` to its `scope.sample` (the run's
 * model, once the host approves), `roots/list` gets the roots, and `notifications/message` becomes
 * the call's `scope.log`. With no call in flight, or several, nothing is guessed: the client's
 * fallbacks answer, else the question is declined and the sampling refused.
 */
export function installServerRequests(client: Client, options: ServerRequestOptions): void {
  const { server, calls } = options;
  const context = (): McpRequestContext => ({ server, callsInFlight: calls.size });
  const unroutable = (what: string) =>
    calls.size === 0
      ? `the MCP server "${server}" sent ${what} while none of our calls of its tools was in flight`
      : `the MCP server "${server}" sent ${what} while ${calls.size} calls of its tools were in flight, and it cannot be told which one it belongs to`;
  /** Tells every call in flight why a request of its server went unanswered (one of them may be waiting for it). */
  const warnCalls = (message: string) => {
    for (const call of calls.all()) calls.log(call, 'warning', message, NOTE_LOGGER);
  };

  client.setRequestHandler(ElicitRequestSchema, async ({ params }): Promise<ElicitResult> => {
    // The SDK refuses url mode before this: we declare form mode only.
    if (params.mode === 'url') throw new McpError(ErrorCode.InvalidParams, 'this client takes form elicitation only');
    const schema = params.requestedSchema as JsonSchema;
    if (jsonExcess(schema, MAX_ELICITATION_SCHEMA) !== undefined) {
      throw new McpError(ErrorCode.InvalidParams, 'the requested schema is too large or too deeply nested');
    }
    const request: ElicitationRequest = { message: cut(params.message), schema };
    const call = calls.only();
    let answer: ElicitationResult;
    if (call) answer = await call.elicit(request);
    else if (options.onElicitation) answer = await options.onElicitation(request, context());
    else {
      warnCalls(`${unroutable('a question (elicitation)')}; it was declined.`);
      return { action: 'decline' };
    }
    if (answer.action !== 'accept') return { action: answer.action };
    const content = withSchemaDefaults(schema, answer.content);
    const problem = checkElicitationAnswer(schema, content);
    if (problem !== undefined) {
      const message = `the answer does not match the requested schema: ${problem}`;
      if (call)
        calls.log(
          call,
          'warning',
          `The answer to the MCP server "${server}"'s question was not sent: ${message}.`,
          NOTE_LOGGER,
        );
      throw new McpError(ErrorCode.InvalidParams, message);
    }
    return { action: 'accept', content: content as ElicitResult['content'] & object };
  });

  client.setRequestHandler(CreateMessageRequestSchema, async ({ params }): Promise<CreateMessageResult> => {
    const request = samplingRequestOf(params);
    const call = calls.only();
    let result: SamplingResult;
    if (call) result = await call.sample(request);
    else if (options.onSampling) result = await options.onSampling(request, context());
    else {
      const message = `${unroutable('a request for a completion (sampling)')}; it was refused`;
      warnCalls(`${message}.`);
      throw new McpError(ErrorCode.InvalidRequest, message);
    }
    return {
      role: 'assistant',
      content: { type: 'text', text: result.content.text },
      model: result.model,
      ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}),
    };
  });

  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [...options.roots()] }));

  client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    const data = jsonExcess(params.data, MAX_LOG_DATA) === undefined ? params.data : '[log data too large, not kept]';
    const logger = typeof params.logger === 'string' ? cut(params.logger, 200) : undefined;
    const call = calls.only();
    if (call) calls.log(call, params.level, data, logger);
    else {
      try {
        options.onLog?.({ server, level: params.level, data, ...(logger !== undefined ? { logger } : {}) });
      } catch {
        // The host's listener failing is its own; the session goes on.
      }
    }
  });
}

/** A server's progress for a call, as the call's `scope.reportProgress` takes it (its message cut). */
function progressOf({ progress, total, message }: Progress) {
  return {
    progress,
    ...(total !== undefined ? { total } : {}),
    ...(message !== undefined ? { message: cut(message, 1_000) } : {}),
  };
}

/** A server's sampling request as ours, within bounds: text, image or audio messages, no tools. */
function samplingRequestOf(params: CreateMessageRequest['params']): SamplingRequest {
  const refuse = (why: string): never => {
    throw new McpError(ErrorCode.InvalidParams, `sampling request refused: ${why}`);
  };
  if ((params.tools?.length ?? 0) > 0 || params.toolChoice) refuse('this client samples without tools');
  if (params.messages.length === 0) refuse('it has no messages');
  if (params.messages.length > MAX_SAMPLING_MESSAGES) refuse(`it has more than ${MAX_SAMPLING_MESSAGES} messages`);
  if (!(params.maxTokens > 0)) refuse('maxTokens must be positive');
  let chars = (params.systemPrompt ?? '').length;
  const messages = params.messages.map((message): SamplingMessage => {
    const blocks = Array.isArray(message.content) ? message.content : [message.content];
    const [block] = blocks;
    if (blocks.length !== 1 || !block) return refuse('a message must have exactly one content block');
    if (block.type === 'text') {
      chars += block.text.length;
      return { role: message.role, content: { type: 'text', text: block.text } };
    }
    if (block.type === 'image' || block.type === 'audio') {
      if (block.data.length > MAX_SAMPLING_MEDIA_CHARS) refuse(`an ${block.type} is over 5 MB`);
      return { role: message.role, content: { type: block.type, data: block.data, mimeType: block.mimeType } };
    }
    return refuse(`this client does not take ${block.type} content`);
  });
  if (chars > MAX_SAMPLING_CHARS) refuse(`its text is longer than ${MAX_SAMPLING_CHARS} characters`);
  return {
    messages,
    maxTokens: Math.min(params.maxTokens, MAX_SAMPLING_TOKENS),
    ...(params.systemPrompt !== undefined ? { systemPrompt: cut(params.systemPrompt, MAX_SAMPLING_CHARS) } : {}),
    ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
    ...(params.stopSequences ? { stopSequences: params.stopSequences.slice(0, 16).map((s) => cut(s, 200)) } : {}),
  };
}
