import { callId, isFailure, type ScriptedAnswer, scriptExhausted } from './script.js';
import {
  deliver,
  type ErrorNames,
  errorNameOf,
  estimatedUsage,
  type StandInOptions,
  type StandInServer,
  sendFailure,
  sendJson,
  sendReply,
  standIn,
  startScriptedHttp,
  streamHeaders,
  textPieces,
  withMidStreamError,
} from './scriptedHttp.js';

/** A Messages API request body as the server received it. */
export interface RecordedAnthropicRequest {
  readonly model?: string;
  readonly max_tokens?: number;
  readonly system?:
    | string
    | readonly { type: string; text?: string; cache_control?: { readonly type: string; readonly ttl?: string } }[];
  readonly messages: readonly { role: string; content: string | readonly Record<string, unknown>[] }[];
  readonly tools?: readonly Record<string, unknown>[];
  readonly tool_choice?: unknown;
  readonly thinking?: unknown;
  readonly temperature?: number;
  readonly stream?: boolean;
  readonly [key: string]: unknown;
}

export interface AnthropicServerOptions extends StandInOptions<RecordedAnthropicRequest> {
  readonly model?: string;
}

export interface AnthropicServer extends StandInServer<RecordedAnthropicRequest> {
  /** `http://127.0.0.1:<port>`, ready for `new Anthropic({ baseURL })` (the SDK adds `/v1/messages`). */
  readonly baseURL: string;
}

/** The error type Anthropic names for each status it answers with. */
const ERROR_TYPES: ErrorNames = {
  byStatus: {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    500: 'api_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  },
  server: 'api_error',
  client: 'invalid_request_error',
};

const errorBody = (type: string, message: string) => ({ type: 'error', error: { type, message } });

/**
 * A real HTTP server on 127.0.0.1 (random port) speaking Anthropic's Messages API (POST
 * /v1/messages), answering from the same scripts as the OpenAI-compatible one: the message with
 * its text, tool_use and thinking blocks, or its server-sent events when streamed; errors in
 * Anthropic's shape with their Retry-After; an `error` event mid-stream; cut, stalled or slow replies.
 */
export async function startAnthropicServer(options: AnthropicServerOptions): Promise<AnthropicServer> {
  const model = options.model ?? 'scripted-model';
  const server = await startScriptedHttp<RecordedAnthropicRequest>({
    script: options.script,
    keepRequests: options.keepRequests,
    route(req, res, path) {
      if (req.method === 'POST' && path === '/v1/messages') return false;
      sendJson(res, 404, errorBody('not_found_error', `no route ${req.method} ${req.url}`));
      return true;
    },
    answer: ({ res, body, index, reply }) => {
      if (!reply) {
        return sendJson(res, 500, errorBody('api_error', scriptExhausted(index)), { 'x-should-retry': 'false' });
      }
      if (isFailure(reply)) {
        const { error } = reply;
        // An overlong context is refused in Anthropic's words where the script gives none.
        const tooLong =
          error.code === 'context_length_exceeded'
            ? `prompt is too long: ${estimatedUsage(sentText(body), '').inputTokens} tokens > 200000 maximum`
            : undefined;
        return sendFailure(res, { ...error, message: error.message ?? tooLong }, (status, message, headers) =>
          sendJson(res, status, errorBody(error.type ?? errorNameOf(ERROR_TYPES, status), message), headers),
        );
      }
      const message = toMessage(reply, index, model, body);
      if (body.stream) return deliver(res, streamHeaders, streamEvents(message, reply), reply);
      return sendReply(res, message, reply);
    },
  });
  return standIn(server, { baseURL: server.origin });
}

/** What the request sent, as the text its input tokens are estimated from. */
const sentText = (body: RecordedAnthropicRequest) =>
  JSON.stringify([body.system ?? '', body.messages, body.tools ?? []]);

const STOP_REASONS = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
} as const;

type Block =
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string }
  | { readonly type: 'redacted_thinking'; readonly data: string }
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly input: unknown };

type AnthropicMessage = ReturnType<typeof toMessage>;

/** The reply as the API's message: thinking first, then the text, then the tool calls. */
function toMessage(reply: ScriptedAnswer, index: number, model: string, body: RecordedAnthropicRequest) {
  const content: Block[] = (reply.reasoning ?? []).map((part) =>
    part.redacted !== undefined
      ? { type: 'redacted_thinking', data: part.redacted }
      : { type: 'thinking', thinking: part.text, signature: part.signature ?? '' },
  );
  if (reply.content) content.push({ type: 'text', text: reply.content });
  (reply.toolCalls ?? []).forEach((call, i) => {
    // A string is sent as it is (a script's malformed arguments); the API itself always sends an object.
    const input = typeof call.arguments === 'string' ? call.arguments : (call.arguments ?? {});
    content.push({ type: 'tool_use', id: callId(call, index, i), name: call.name, input });
  });
  const calls = reply.toolCalls?.length ?? 0;
  const usage = reply.usage ?? estimatedUsage(sentText(body), JSON.stringify(content));
  return {
    id: `msg_${index}`,
    type: 'message' as const,
    role: 'assistant' as const,
    model,
    content,
    stop_reason: STOP_REASONS[reply.finishReason ?? (calls > 0 ? 'tool_calls' : 'stop')],
    stop_sequence: null,
    usage: reply.wireUsage ?? wireUsage(usage),
  };
}

/**
 * Usage in the API's shape. Anthropic's `input_tokens` leaves out the cache's reads and writes,
 * where the script's `inputTokens` (as our usage) counts them: they are taken off it here.
 */
function wireUsage(usage: NonNullable<ScriptedAnswer['usage']>) {
  const { inputTokens, outputTokens, cachedInputTokens, cacheWriteTokens, reasoningTokens } = usage;
  return {
    input_tokens: Math.max(0, inputTokens - (cachedInputTokens ?? 0) - (cacheWriteTokens ?? 0)),
    output_tokens: outputTokens,
    cache_read_input_tokens: cachedInputTokens ?? 0,
    cache_creation_input_tokens: cacheWriteTokens ?? 0,
    ...(reasoningTokens !== undefined ? { output_tokens_details: { thinking_tokens: reasoningTokens } } : {}),
  };
}

const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/**
 * The message as the API streams it: message_start (the input's usage), a ping, each block's
 * start, deltas and stop, then message_delta (the stop reason and the output's usage) and
 * message_stop; or, with `midStreamError`, an `error` event after that many events.
 */
function streamEvents(message: AnthropicMessage, reply: ScriptedAnswer): string[] {
  const { usage } = message;
  const events = [
    event('message_start', {
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    }),
    event('ping', {}),
  ];
  message.content.forEach((block, index) => {
    const delta = (data: object) => events.push(event('content_block_delta', { index, delta: data }));
    switch (block.type) {
      case 'thinking':
        events.push(event('content_block_start', { index, content_block: { ...block, thinking: '', signature: '' } }));
        for (const piece of textPieces(block.thinking)) delta({ type: 'thinking_delta', thinking: piece });
        delta({ type: 'signature_delta', signature: block.signature });
        break;
      case 'redacted_thinking':
        events.push(event('content_block_start', { index, content_block: block }));
        break;
      case 'text':
        events.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
        for (const piece of textPieces(block.text)) delta({ type: 'text_delta', text: piece });
        break;
      case 'tool_use': {
        events.push(event('content_block_start', { index, content_block: { ...block, input: {} } }));
        const json = typeof block.input === 'string' ? block.input : JSON.stringify(block.input);
        for (const piece of textPieces(json)) delta({ type: 'input_json_delta', partial_json: piece });
        break;
      }
    }
    events.push(event('content_block_stop', { index }));
  });
  events.push(
    event('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage }),
    event('message_stop', {}),
  );
  return withMidStreamError(events, reply, (failure) =>
    event('error', { error: { type: failure.type ?? 'overloaded_error', message: failure.message ?? 'Overloaded' } }),
  );
}
