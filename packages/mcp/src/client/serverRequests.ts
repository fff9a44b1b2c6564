import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type ClientCapabilities,
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitRequestURLParams,
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

/** What a client declares: elicitation by form (defaults applied, SEP-1034) and by URL, sampling with tools, roots. */
export const CLIENT_CAPABILITIES: ClientCapabilities = {
  elicitation: { form: { applyDefaults: true }, url: {} },
  sampling: { tools: {} },
  roots: { listChanged: true },
};

/** The longest question, system prompt or progress message we pass on; a server's text is cut there. */
export const MAX_MESSAGE_CHARS = 10_000;
/** The most a requested schema may be (MCP's are flat objects of primitives: far smaller). */
export const MAX_ELICITATION_SCHEMA: JsonLimits = { depth: 8, chars: 50_000 };
/** The longest URL a server may send a person to (URL-mode elicitation), and the longest id of one. */
export const MAX_ELICITATION_URL_CHARS = 2_048;
export const MAX_ELICITATION_ID_CHARS = 256;
/** The most tools a sampling request may offer the model, and the most each one's input schema may be. */
export const MAX_SAMPLING_TOOLS = 64;
export const MAX_SAMPLING_TOOL_SCHEMA: JsonLimits = { depth: 16, chars: 50_000 };
/** The most content blocks one sampling message may have (tool calls and their results). */
export const MAX_SAMPLING_BLOCKS = 64;
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
/** The most URLs of one server a person agreed to open that wait for the server's completion. */
const MAX_OPEN_URLS = 100;

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
  /** A line of the server's log: the call's in flight, else the client's `onLog`. */
  const logLine = (level: LogLevel, data: unknown, logger: string | undefined) => {
    const call = calls.only();
    if (call) return calls.log(call, level, data, logger);
    try {
      options.onLog?.({ server, level, data, ...(logger !== undefined ? { logger } : {}) });
    } catch {
      // The host's listener failing is its own; the session goes on.
    }
  };
  /** Tells every call in flight why a request of its server went unanswered (one of them may be waiting for it). */
  const warnCalls = (message: string) => {
    for (const call of calls.all()) calls.log(call, 'warning', message, NOTE_LOGGER);
  };

  /** What `request` gets from the call in flight, else the client's fallback; `undefined` when neither can answer. */
  const ask = async (request: ElicitationRequest): Promise<ElicitationResult | undefined> => {
    const call = calls.only();
    if (call) return call.elicit(request);
    if (options.onElicitation) return options.onElicitation(request, context());
    warnCalls(`${unroutable('a question (elicitation)')}; it was declined.`);
    return undefined;
  };
  // The ids of the URLs a person agreed to open: a completion naming any other is ignored (MCP says so).
  const opened = new Set<string>();

  client.setRequestHandler(ElicitRequestSchema, async ({ params }): Promise<ElicitResult> => {
    if (params.mode === 'url') {
      const request = urlRequestOf(params, server);
      const answer = (await ask(request)) ?? { action: 'decline' };
      if (answer.action === 'accept') {
        opened.add(request.elicitationId);
        // A server that never completes its URLs must not grow this without end.
        if (opened.size > MAX_OPEN_URLS) opened.delete(opened.values().next().value as string);
      }
      return { action: answer.action };
    }
    const schema = params.requestedSchema as JsonSchema;
    if (jsonExcess(schema, MAX_ELICITATION_SCHEMA) !== undefined) {
      throw new McpError(ErrorCode.InvalidParams, 'the requested schema is too large or too deeply nested');
    }
    const request: ElicitationRequest = { message: cut(params.message), schema };
    const call = calls.only();
    const answer = await ask(request);
    if (!answer) return { action: 'decline' };
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

  client.setNotificationHandler(ElicitationCompleteNotificationSchema, ({ params }) => {
    if (!opened.delete(params.elicitationId)) return;
    const data = `The MCP server "${server}" says the person is done at the URL it sent (elicitation ${params.elicitationId}).`;
    logLine('info', data, NOTE_LOGGER);
  });

  client.setRequestHandler(
    CreateMessageRequestSchema,
    async ({ params }): Promise<CreateMessageResult | CreateMessageResultWithTools> => {
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
      const { text } = result.content;
      const base = {
        role: 'assistant' as const,
        model: result.model,
        ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}),
      };
      // Asked with tools, the answer is a list of blocks: its text, then the calls the model asked for.
      if (request.tools === undefined) return { ...base, content: { type: 'text', text } };
      const blocks: CreateMessageResultWithTools['content'] = [
        ...(text !== '' || !result.toolUse?.length ? [{ type: 'text' as const, text }] : []),
        ...(result.toolUse ?? []).map(({ id, name, input }) => ({
          type: 'tool_use' as const,
          id,
          name,
          input: { ...input },
        })),
      ];
      return { ...base, content: blocks };
    },
  );

  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [...options.roots()] }));

  client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    const data = jsonExcess(params.data, MAX_LOG_DATA) === undefined ? params.data : '[log data too large, not kept]';
    const logger = typeof params.logger === 'string' ? cut(params.logger, 200) : undefined;
    logLine(params.level, data, logger);
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

/**
 * A server's URL-mode question as ours, within bounds: an `http:` or `https:` URL of at most
 * `MAX_ELICITATION_URL_CHARS` with no user name or password in it (`https://bank.example@evil.example`
 * reads as the bank), its message cut, and the server's name for whoever shows it.
 */
export function urlRequestOf(
  params: ElicitRequestURLParams,
  server: string,
): Extract<ElicitationRequest, { mode: 'url' }> {
  const refuse = (why: string): never => {
    throw new McpError(ErrorCode.InvalidParams, `URL elicitation refused: ${why}`);
  };
  if (params.url.length > MAX_ELICITATION_URL_CHARS)
    refuse(`the URL is longer than ${MAX_ELICITATION_URL_CHARS} characters`);
  if (params.elicitationId.length > MAX_ELICITATION_ID_CHARS)
    refuse(`the elicitationId is longer than ${MAX_ELICITATION_ID_CHARS} characters`);
  const url = URL.parse(params.url) ?? refuse('the URL is not a URL');
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    refuse(`only http and https URLs are opened, not ${cut(url.protocol, 40)}`);
  if (url.username !== '' || url.password !== '') refuse('the URL has a user name or password in it');
  return { mode: 'url', message: cut(params.message), url: url.href, elicitationId: params.elicitationId, server };
}

type McpSamplingBlock = Extract<CreateMessageRequest['params']['messages'][number]['content'], { type: string }>;
type SamplingBlock = Exclude<SamplingMessage['content'], readonly unknown[]>;
type ToolResultPart = Extract<SamplingBlock, { type: 'tool_result' }>['content'][number];

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * A server's sampling request as ours, within bounds: text, image or audio messages; tools for the
 * model (at most `MAX_SAMPLING_TOOLS`, each named plainly, its schema within `MAX_SAMPLING_TOOL_SCHEMA`)
 * and the `tool_use` and `tool_result` blocks of earlier turns — several blocks in a message only
 * where tools are in it.
 */
function samplingRequestOf(params: CreateMessageRequest['params']): SamplingRequest {
  const refuse = (why: string): never => {
    throw new McpError(ErrorCode.InvalidParams, `sampling request refused: ${why}`);
  };
  if (params.messages.length === 0) refuse('it has no messages');
  if (params.messages.length > MAX_SAMPLING_MESSAGES) refuse(`it has more than ${MAX_SAMPLING_MESSAGES} messages`);
  if (!(params.maxTokens > 0)) refuse('maxTokens must be positive');
  const tools = params.tools?.map((tool, i) => {
    if (i === MAX_SAMPLING_TOOLS) refuse(`it offers more than ${MAX_SAMPLING_TOOLS} tools`);
    if (!TOOL_NAME.test(tool.name))
      refuse(
        `a tool's name must be 1 to 128 letters, digits, "_", "-" or ".", not ${JSON.stringify(cut(tool.name, 60))}`,
      );
    if (jsonExcess(tool.inputSchema, MAX_SAMPLING_TOOL_SCHEMA) !== undefined)
      refuse(`the input schema of the tool "${tool.name}" is too large or too deeply nested`);
    return {
      name: tool.name,
      ...(tool.description !== undefined ? { description: cut(tool.description, 2_000) } : {}),
      inputSchema: tool.inputSchema as JsonSchema,
    };
  });
  if (tools && new Set(tools.map((tool) => tool.name)).size < tools.length) refuse('it offers two tools of one name');
  let chars = (params.systemPrompt ?? '').length;
  const media = (block: { type: 'image' | 'audio'; data: string; mimeType: string }) => {
    if (block.data.length > MAX_SAMPLING_MEDIA_CHARS) refuse(`an ${block.type} is over 5 MB`);
    return { type: block.type, data: block.data, mimeType: block.mimeType };
  };
  const json = (value: unknown, what: string) => {
    if (jsonExcess(value, MAX_SAMPLING_TOOL_SCHEMA) !== undefined) refuse(`${what} is too large or too deeply nested`);
    chars += JSON.stringify(value).length;
  };
  const blockOf = (role: SamplingMessage['role'], block: McpSamplingBlock): SamplingBlock => {
    switch (block.type) {
      case 'text':
        chars += block.text.length;
        return { type: 'text', text: block.text };
      case 'image':
      case 'audio':
        return media(block);
      case 'tool_use':
        if (role !== 'assistant') refuse('a tool_use block must be in an assistant message');
        json(block.input, `the input of the tool_use "${cut(block.id, 60)}"`);
        chars += block.id.length + block.name.length;
        return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
      case 'tool_result': {
        if (role !== 'user') refuse('a tool_result block must be in a user message');
        chars += block.toolUseId.length;
        const content = block.content.map((part): ToolResultPart => {
          if (part.type === 'text') {
            chars += part.text.length;
            return { type: 'text', text: part.text };
          }
          if (part.type === 'image' || part.type === 'audio') return media(part);
          return refuse(`this client does not take ${part.type} content in a tool_result`);
        });
        return {
          type: 'tool_result',
          toolUseId: block.toolUseId,
          content,
          ...(block.isError !== undefined ? { isError: block.isError } : {}),
        };
      }
      default:
        return refuse(`this client does not take ${(block as { type: string }).type} content`);
    }
  };
  const messages = params.messages.map((message): SamplingMessage => {
    const blocks = Array.isArray(message.content) ? message.content : [message.content];
    if (blocks.length === 0) refuse('a message has no content');
    if (blocks.length > MAX_SAMPLING_BLOCKS) refuse(`a message has more than ${MAX_SAMPLING_BLOCKS} content blocks`);
    if (blocks.length > 1 && !blocks.some((block) => block.type === 'tool_use' || block.type === 'tool_result'))
      refuse('a message may have several content blocks only when it holds tool_use or tool_result blocks');
    const content = blocks.map((block) => blockOf(message.role, block));
    return { role: message.role, content: content.length === 1 ? (content[0] as SamplingBlock) : content };
  });
  if (chars > MAX_SAMPLING_CHARS) refuse(`its text is longer than ${MAX_SAMPLING_CHARS} characters`);
  return {
    messages,
    maxTokens: Math.min(params.maxTokens, MAX_SAMPLING_TOKENS),
    ...(params.systemPrompt !== undefined ? { systemPrompt: cut(params.systemPrompt, MAX_SAMPLING_CHARS) } : {}),
    ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
    ...(params.stopSequences ? { stopSequences: params.stopSequences.slice(0, 16).map((s) => cut(s, 200)) } : {}),
    ...(tools ? { tools, toolChoice: params.toolChoice?.mode ?? 'auto' } : {}),
  };
}
