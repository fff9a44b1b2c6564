import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  callArguments,
  callId,
  isFailure,
  nextReply,
  type Script,
  type ScriptedAnswer,
  scriptExhausted,
  sleep,
  unused,
} from './script.js';

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
  const requests: RecordedRequest[] = [];
  const paths: string[] = [];
  let served = 0;
  const keep = options.keepRequests ?? true;
  const model = options.model ?? 'scripted-model';
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: String(error), type: 'server_error' },
        }),
      );
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '';
    if (keep) paths.push(url);
    const path = new URL(url, 'http://127.0.0.1').pathname;
    if (req.method === 'GET' && path.endsWith('/models')) {
      return json(res, 200, {
        object: 'list',
        data: [{ id: model, object: 'model', owned_by: 'openmanus' }],
      });
    }
    if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
      return json(res, 404, {
        error: {
          message: `no route ${req.method} ${url}`,
          type: 'invalid_request_error',
        },
      });
    }
    const body = JSON.parse(await readBody(req)) as RecordedRequest;
    const index = served++;
    if (keep) requests.push(body);
    const reply = nextReply(options.script, index, body);
    if (!reply) {
      return json(
        res,
        500,
        { error: { message: scriptExhausted(index), type: 'server_error' } },
        { 'x-should-retry': 'false' },
      );
    }
    if (reply.delayMs) await sleep(reply.delayMs);
    if (isFailure(reply)) {
      const { status, message, code, retryAfter, retryAfterMs } = reply.error;
      if (status === undefined) {
        res.destroy();
        return;
      }
      const headers: Record<string, string> = {};
      if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
      if (retryAfterMs !== undefined) headers['retry-after-ms'] = String(retryAfterMs);
      return json(
        res,
        status,
        {
          error: {
            message: message ?? `scripted HTTP ${status}`,
            type: 'scripted_error',
            code: code ?? null,
          },
        },
        headers,
      );
    }
    const completion = toCompletion(reply, index, model, body);
    if (body.stream) return deliver(res, streamHeaders, streamEvents(completion, body), reply);
    if (
      reply.trickleMs === undefined &&
      reply.stallAfter === undefined &&
      reply.cutAfter === undefined &&
      reply.endAfter === undefined
    )
      return json(res, 200, completion);
    const text = Buffer.from(JSON.stringify(completion));
    const pieces: Buffer[] = [];
    for (let i = 0; i < text.length; i += 16) pieces.push(text.subarray(i, i + 16));
    return deliver(res, { 'content-type': 'application/json', 'content-length': String(text.length) }, pieces, reply);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    paths,
    get hits() {
      return served;
    },
    assertConsumed() {
      const left = unused(options.script, served);
      if (left > 0) throw new Error(`scripted server: ${left} of ${left + served} replies were never requested`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
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
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
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

const streamHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};

/**
 * Sends the headers, then the body's pieces: all at once, or paced (`trickleMs`), stopping
 * after `stallAfter` pieces with the connection left open, cutting it after `cutAfter`, or
 * ending the reply after `endAfter` as if it were complete.
 */
async function deliver(
  res: ServerResponse,
  headers: Record<string, string>,
  pieces: readonly (string | Buffer)[],
  reply: ScriptedAnswer,
): Promise<void> {
  const { trickleMs, stallAfter, cutAfter, endAfter } = reply;
  res.writeHead(200, headers);
  res.flushHeaders();
  for (let i = 0; i < pieces.length; i++) {
    if (i === stallAfter) return;
    if (i === cutAfter) {
      res.destroy();
      return;
    }
    if (i === endAfter) break;
    if (trickleMs) await sleep(trickleMs);
    if (res.destroyed) return;
    res.write(pieces[i]);
  }
  res.end();
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
