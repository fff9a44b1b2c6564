import { callArguments, callId, isFailure, type Script, type ScriptedAnswer, scriptExhausted } from './script.js';
import {
  deliver,
  deliveredInPieces,
  piecesOf,
  retryHeaders,
  sendJson,
  startScriptedHttp,
  streamHeaders,
} from './scriptedHttp.js';

/** A chat-completions request body as the server received it. */
export interface RecordedRequest {
  readonly model?: string;
  readonly messages: readonly {
    role: string;
    content?: unknown;
    tool_calls?: unknown;
    tool_call_id?: string;
  }[];
  readonly tools?: readonly unknown[];
  readonly tool_choice?: unknown;
  readonly stream?: boolean;
  readonly max_tokens?: number;
  readonly max_completion_tokens?: number;
  readonly temperature?: number;
  readonly [key: string]: unknown;
}

export interface OpenAiServerOptions {
  readonly script: Script<RecordedRequest>;
  readonly model?: string;
  /**
   * Keep every request for the test to read (default). A long-lived server (a benchmark serving
   * thousands of long histories) turns it off: it then keeps only the count, and `requests` and `paths` stay empty.
   */
  readonly keepRequests?: boolean;
}

export interface OpenAiServer {
  /** `http://127.0.0.1:<port>/v1`, ready for `new OpenAI({ baseURL })`. */
  readonly baseURL: string;
  readonly requests: readonly RecordedRequest[];
  /** The path and query of every request, in order (e.g. Azure's deployment URL). */
  readonly paths: readonly string[];
  /** How many requests reached the server, retries included. */
  readonly hits: number;
  assertConsumed(): void;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 (random port) speaking the OpenAI chat-completions API,
 * answering from a script: tool calls, text, errors with Retry-After, slow and streamed replies.
 */
export async function startOpenAiServer(options: OpenAiServerOptions): Promise<OpenAiServer> {
  const model = options.model ?? 'scripted-model';
  const server = await startScriptedHttp<RecordedRequest>({
    script: options.script,
    ...(options.keepRequests !== undefined ? { keepRequests: options.keepRequests } : {}),
    route(req, res, path) {
      if (req.method === 'GET' && path.endsWith('/models')) {
        sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', owned_by: 'openmanus' }] });
        return true;
      }
      if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
        sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
        return true;
      }
      return false;
    },
    answer: ({ res, body, index, reply }) => {
      if (!reply) {
        return sendJson(
          res,
          500,
          { error: { message: scriptExhausted(index), type: 'server_error' } },
          { 'x-should-retry': 'false' },
        );
      }
      if (isFailure(reply)) {
        const { status, message, code } = reply.error;
        if (status === undefined) {
          res.destroy();
          return;
        }
        const type = reply.error.type ?? 'scripted_error';
        const error = { message: message ?? `scripted HTTP ${status}`, type, code: code ?? null };
        return sendJson(res, status, { error }, retryHeaders(reply.error));
      }
      const completion = toCompletion(reply, index, model, body);
      if (body.stream)
        return deliver(res, streamHeaders, withMidStreamError(streamEvents(completion, body), reply), reply);
      if (!deliveredInPieces(reply)) return sendJson(res, 200, completion);
      const text = Buffer.from(JSON.stringify(completion));
      return deliver(
        res,
        { 'content-type': 'application/json', 'content-length': String(text.length) },
        piecesOf(text),
        reply,
      );
    },
  });
  return {
    baseURL: `${server.origin}/v1`,
    requests: server.requests,
    paths: server.paths,
    get hits() {
      return server.hits;
    },
    assertConsumed: () => server.assertConsumed(),
    close: () => server.close(),
  };
}

function toCompletion(reply: ScriptedAnswer, index: number, model: string, body: RecordedRequest) {
  const toolCalls = (reply.toolCalls ?? []).map((call, i) => ({
    id: callId(call, index, i),
    type: 'function' as const,
    function: { name: call.name, arguments: call.objectArguments ? call.arguments : callArguments(call) },
  }));
  const content = reply.content ?? (toolCalls.length > 0 ? null : '');
  const usage = reply.usage ?? {
    inputTokens: Math.ceil(JSON.stringify(body.messages).length / 4),
    outputTokens: Math.ceil(((content ?? '') + JSON.stringify(toolCalls)).length / 4),
  };
  return {
    id: `chatcmpl-${index}`,
    object: 'chat.completion' as const,
    created: 0,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant' as const,
          content,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          refusal: null,
        },
        finish_reason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
        logprobs: null,
      },
    ],
    usage: reply.wireUsage ?? wireUsage(usage),
  };
}

/** Usage in the API's shape: the details only where the script gives them, as servers without a cache send none. */
function wireUsage(usage: NonNullable<ScriptedAnswer['usage']>) {
  const { inputTokens, outputTokens, cachedInputTokens, cacheWriteTokens, reasoningTokens } = usage;
  const prompt = {
    ...(cachedInputTokens !== undefined ? { cached_tokens: cachedInputTokens } : {}),
    ...(cacheWriteTokens !== undefined ? { cache_write_tokens: cacheWriteTokens } : {}),
  };
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    ...(Object.keys(prompt).length > 0 ? { prompt_tokens_details: prompt } : {}),
    ...(reasoningTokens !== undefined ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } } : {}),
  };
}

/** Server-sent events in the API's chunk format: text in pieces, then tool call deltas, then usage. */
function streamEvents(completion: ReturnType<typeof toCompletion>, body: RecordedRequest): string[] {
  const events: string[] = [];
  const choice = completion.choices[0];
  const base = {
    id: completion.id,
    object: 'chat.completion.chunk',
    created: 0,
    model: completion.model,
  };
  const send = (delta: object, finish: string | null = null) =>
    events.push(
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] })}\n\n`,
    );
  send({ role: 'assistant', content: '' });
  const text = choice?.message.content ?? '';
  for (let i = 0; i < text.length; i += 16) send({ content: text.slice(i, i + 16) });
  (choice?.message.tool_calls ?? []).forEach((call, index) => {
    send({
      tool_calls: [
        {
          index,
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: '' },
        },
      ],
    });
    const args =
      typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments);
    for (let i = 0; i < args.length; i += 16)
      send({
        tool_calls: [{ index, function: { arguments: args.slice(i, i + 16) } }],
      });
  });
  send({}, choice?.finish_reason ?? 'stop');
  const options = body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage)
    events.push(`data: ${JSON.stringify({ ...base, choices: [], usage: completion.usage })}\n\n`);
  events.push('data: [DONE]\n\n');
  return events;
}

/** The events up to a scripted mid-stream error, then the error as such servers send it (a `data:` payload with `error`). */
function withMidStreamError(events: string[], reply: ScriptedAnswer): string[] {
  const failure = reply.midStreamError;
  if (!failure) return events;
  const error = { message: failure.message ?? 'Overloaded', type: failure.type ?? 'overloaded_error', code: null };
  return [...events.slice(0, failure.after), `data: ${JSON.stringify({ error })}\n\n`];
}
