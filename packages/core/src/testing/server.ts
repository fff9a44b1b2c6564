import { callArguments, callId, isFailure, type ScriptedAnswer, scriptExhausted } from './script.js';
import {
  deliver,
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

export interface OpenAiServerOptions extends StandInOptions<RecordedRequest> {
  readonly model?: string;
}

/** The OpenAI stand-in; its `paths` show the URL a client used (Azure's deployment URL, say). */
export interface OpenAiServer extends StandInServer<RecordedRequest> {
  /** `http://127.0.0.1:<port>/v1`, ready for `new OpenAI({ baseURL })`. */
  readonly baseURL: string;
}

/**
 * A real HTTP server on 127.0.0.1 (random port) speaking the OpenAI chat-completions API,
 * answering from a script: tool calls, text, errors with Retry-After, slow and streamed replies.
 */
export async function startOpenAiServer(options: OpenAiServerOptions): Promise<OpenAiServer> {
  const model = options.model ?? 'scripted-model';
  const server = await startScriptedHttp<RecordedRequest>({
    script: options.script,
    keepRequests: options.keepRequests,
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
        const { type = 'scripted_error', code = null } = reply.error;
        return sendFailure(res, reply.error, (status, message, headers) =>
          sendJson(res, status, { error: { message, type, code } }, headers),
        );
      }
      const completion = toCompletion(reply, index, model, body);
      if (body.stream) return deliver(res, streamHeaders, streamEvents(completion, body, reply), reply);
      return sendReply(res, completion, reply);
    },
  });
  return standIn(server, { baseURL: `${server.origin}/v1` });
}

function toCompletion(reply: ScriptedAnswer, index: number, model: string, body: RecordedRequest) {
  const toolCalls = (reply.toolCalls ?? []).map((call, i) => ({
    id: callId(call, index, i),
    type: 'function' as const,
    function: { name: call.name, arguments: call.objectArguments ? call.arguments : callArguments(call) },
  }));
  const content = reply.content ?? (toolCalls.length > 0 ? null : '');
  const usage =
    reply.usage ?? estimatedUsage(JSON.stringify(body.messages), (content ?? '') + JSON.stringify(toolCalls));
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

/**
 * Server-sent events in the API's chunk format: text in pieces, then tool call deltas, then usage;
 * a scripted mid-stream error is sent as such servers send it (a `data:` payload with `error`).
 */
function streamEvents(completion: ReturnType<typeof toCompletion>, body: RecordedRequest, reply: ScriptedAnswer) {
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
  for (const piece of textPieces(text)) send({ content: piece });
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
    for (const piece of textPieces(args)) send({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  send({}, choice?.finish_reason ?? 'stop');
  const options = body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage)
    events.push(`data: ${JSON.stringify({ ...base, choices: [], usage: completion.usage })}\n\n`);
  events.push('data: [DONE]\n\n');
  return withMidStreamError(events, reply, (failure) => {
    const error = { message: failure.message ?? 'Overloaded', type: failure.type ?? 'overloaded_error', code: null };
    return `data: ${JSON.stringify({ error })}\n\n`;
  });
}
