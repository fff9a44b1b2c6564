import type { ServerResponse } from 'node:http';
import { lazyModule } from '../lazyModule.js';
import {
  callArguments,
  callId,
  isFailure,
  type ScriptedAnswer,
  type ScriptedFailure,
  scriptExhausted,
} from './script.js';
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
  textPieces,
  withMidStreamError,
} from './scriptedHttp.js';

/** A content block of a Converse message as the server received it (`text`, `toolUse`, `toolResult`, `image`, …). */
export type BedrockBlock = Readonly<Record<string, unknown>>;

/** A Converse or ConverseStream request body as the server received it, with what its path said. */
export interface RecordedBedrockRequest {
  /** The model id (or inference profile) from the path, decoded. */
  readonly modelId: string;
  /** Sent to `converse-stream`. */
  readonly stream: boolean;
  readonly messages: readonly { readonly role: string; readonly content: readonly BedrockBlock[] }[];
  /** The system prompt's blocks: `{ text }`, and `{ cachePoint: { type: 'default' } }` where the port marks the cache. */
  readonly system?: readonly (BedrockBlock & {
    readonly text?: string;
    readonly cachePoint?: { readonly type: string };
  })[];
  readonly toolConfig?: { readonly tools: readonly BedrockBlock[]; readonly toolChoice?: BedrockBlock };
  readonly inferenceConfig?: { readonly maxTokens?: number; readonly temperature?: number };
  readonly [key: string]: unknown;
}

export type BedrockServerOptions = StandInOptions<RecordedBedrockRequest>;

/** The Bedrock stand-in; its `paths` name the model, URL-encoded (`/model/<id>/converse`). */
export interface BedrockServer extends StandInServer<RecordedBedrockRequest> {
  /** `http://127.0.0.1:<port>`, the client's `endpoint`. */
  readonly endpoint: string;
}

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

/**
 * A real HTTP/2 server on 127.0.0.1 (random port, no TLS, as the AWS SDK's Node client speaks
 * to an `http://` endpoint) standing in for Bedrock's Converse and ConverseStream API, answering
 * from a script: text, tool calls, reasoning, usage with cache counts, errors as AWS sends them
 * (`x-amzn-ErrorType`), streams in AWS's binary event stream with an exception frame mid-way, and
 * cut or stalled replies. It refuses, as Bedrock does, a conversation that does not alternate
 * roles, a blank text, tool blocks without a `toolConfig`, and tool results that do not answer
 * the previous reply's calls.
 */
export async function startBedrockServer(options: BedrockServerOptions): Promise<BedrockServer> {
  const server = await startScriptedHttp<RecordedBedrockRequest>({
    script: options.script,
    http2: true,
    keepRequests: options.keepRequests,
    route(req, res, path) {
      if (req.method === 'POST' && ROUTE.test(path)) return false;
      awsError(res, 404, 'UnknownOperationException', `no route ${req.method} ${path}`);
      return true;
    },
    parse(raw, path) {
      const [, model = '', operation] = ROUTE.exec(path) ?? [];
      const body = JSON.parse(raw.toString('utf8')) as RecordedBedrockRequest;
      return { ...body, modelId: decodeURIComponent(model), stream: operation === 'converse-stream' };
    },
    answer: ({ res, body, index, reply }) => {
      if (!reply) return awsError(res, 500, 'InternalServerException', scriptExhausted(index));
      const invalid = refusal(body);
      if (invalid) return awsError(res, 400, 'ValidationException', invalid);
      if (isFailure(reply)) return fail(res, reply);
      const output = toOutput(reply, index, body);
      if (body.stream) {
        return deliver(
          res,
          { 'content-type': 'application/vnd.amazon.eventstream' },
          streamFrames(output, reply),
          reply,
        );
      }
      return sendReply(res, output, reply);
    },
  });
  return standIn(server, { endpoint: server.origin });
}

/** An error as AWS sends it: its type in `x-amzn-ErrorType`, its message in the body. */
function awsError(res: ServerResponse, status: number, type: string, message: string, headers = {}): void {
  sendJson(
    res,
    status,
    { message },
    { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, ...headers },
  );
}

/** The exception Bedrock names for a status, where the script names none. */
const EXCEPTIONS: ErrorNames = {
  byStatus: {
    400: 'ValidationException',
    // Bedrock answers a bad key with 403; a shared script's 401 means the same.
    401: 'UnrecognizedClientException',
    403: 'AccessDeniedException',
    404: 'ResourceNotFoundException',
    408: 'ModelTimeoutException',
    424: 'ModelErrorException',
    429: 'ThrottlingException',
    503: 'ServiceUnavailableException',
  },
  server: 'InternalServerException',
  client: 'ValidationException',
};

function fail(res: ServerResponse, { error }: ScriptedFailure): void {
  // Another provider's type (a shared script's `rate_limit_error`) goes as Bedrock's for the status.
  const own = error.type !== undefined && /Exception$/.test(error.type) ? error.type : undefined;
  sendFailure(res, error, (status, message, headers) =>
    awsError(res, status, own ?? errorNameOf(EXCEPTIONS, status), message, headers),
  );
}

const blank = (block: BedrockBlock) => typeof block.text === 'string' && block.text.trim() === '';
const hasTools = (content: readonly BedrockBlock[]) => content.some((b) => 'toolUse' in b || 'toolResult' in b);
const toolUseIds = (content: readonly BedrockBlock[]) =>
  content.flatMap((b) => ('toolUse' in b ? [(b.toolUse as { toolUseId?: unknown }).toolUseId] : []));
const toolResultIds = (content: readonly BedrockBlock[]) =>
  content.flatMap((b) => ('toolResult' in b ? [(b.toolResult as { toolUseId?: unknown }).toolUseId] : []));

/** Why Bedrock would refuse the conversation (its own words), if it would. */
function refusal({ messages, system, toolConfig }: RecordedBedrockRequest): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return 'The messages field must not be empty.';
  if (messages[0]?.role !== 'user')
    return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  for (const [i, block] of (system ?? []).entries()) {
    if (blank(block)) return `The text field in the SystemContentBlock object at system.${i} is blank.`;
  }
  for (const [i, message] of messages.entries()) {
    const previous = messages[i - 1];
    if (previous?.role === message.role)
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    if (!Array.isArray(message.content) || message.content.length === 0)
      return `The content field in the Message object at messages.${i} is empty.`;
    const at = message.content.findIndex(blank);
    if (at >= 0)
      return `The text field in the ContentBlock object at messages.${i}.content.${at} is blank. Add text to the text field, and try again.`;
    if (hasTools(message.content) && !toolConfig)
      return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
    // Every call of a reply is answered in the next message, each by its own id, and nothing else is.
    const asked = previous ? toolUseIds(previous.content) : [];
    const answered = toolResultIds(message.content);
    const expected = [...asked].sort().join(', ');
    if (message.role === 'user' && [...answered].sort().join(', ') !== expected) {
      return asked.length > 0
        ? `Expected toolResult blocks at messages.${i}.content for the following Ids: ${expected}`
        : `The number of toolResult blocks at messages.${i}.content exceeds the number of toolUse blocks of previous turn.`;
    }
  }
  return undefined;
}

/** Why the reply ended, in Converse's words. */
const STOP_REASONS = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'content_filtered',
} as const;

/** A Converse response: the reply's reasoning, text and tool calls as content blocks, the stop reason and usage. */
function toOutput(reply: ScriptedAnswer, index: number, body: RecordedBedrockRequest) {
  const content: BedrockBlock[] = [];
  for (const part of reply.reasoning ?? []) {
    content.push({
      reasoningContent:
        part.redacted !== undefined
          ? { redactedContent: part.redacted }
          : {
              reasoningText: {
                text: part.text,
                ...(part.signature !== undefined ? { signature: part.signature } : {}),
              },
            },
    });
  }
  if (reply.content) content.push({ text: reply.content });
  const calls = reply.toolCalls ?? [];
  calls.forEach((call, i) => {
    // Converse's input is a JSON value: a string the script gives that is not JSON goes as a string.
    const text = callArguments(call);
    let input: unknown = text;
    try {
      input = JSON.parse(text);
    } catch {}
    content.push({ toolUse: { toolUseId: callId(call, index, i), name: call.name, input } });
  });
  const usage = reply.usage ?? estimatedUsage(JSON.stringify(body.messages), JSON.stringify(content));
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: STOP_REASONS[reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop')],
    usage: reply.wireUsage ?? wireUsage(usage),
    metrics: { latencyMs: 0 },
  };
}

type Output = ReturnType<typeof toOutput>;

/**
 * Usage as Bedrock reports it: `inputTokens` without the tokens read from or written to the
 * cache (the script's `inputTokens` counts them, as the port's usage does).
 */
function wireUsage(usage: NonNullable<ScriptedAnswer['usage']>) {
  const { inputTokens, outputTokens, cachedInputTokens, cacheWriteTokens } = usage;
  const fresh = Math.max(0, inputTokens - (cachedInputTokens ?? 0) - (cacheWriteTokens ?? 0));
  return {
    inputTokens: fresh,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    ...(cachedInputTokens !== undefined ? { cacheReadInputTokens: cachedInputTokens } : {}),
    ...(cacheWriteTokens !== undefined ? { cacheWriteInputTokens: cacheWriteTokens } : {}),
  };
}

type Codec = InstanceType<typeof import('@smithy/eventstream-codec').EventStreamCodec>;
const loadCodec = lazyModule<typeof import('@smithy/eventstream-codec')>('@smithy/eventstream-codec');
let codec: Codec | undefined;

/** The event stream's encoder, loaded when a stream is first served (the package is an optional peer). */
function eventStreamCodec(): Codec {
  if (codec) return codec;
  let codecModule: typeof import('@smithy/eventstream-codec');
  try {
    codecModule = loadCodec();
  } catch (error) {
    throw new Error('startBedrockServer streams replies with @smithy/eventstream-codec: install it', { cause: error });
  }
  codec = new codecModule.EventStreamCodec(
    (bytes) => Buffer.from(bytes).toString('utf8'),
    (text) => new Uint8Array(Buffer.from(text, 'utf8')),
  );
  return codec;
}

const header = (value: string) => ({ type: 'string' as const, value });

/** One message of AWS's event stream: an event, or an exception (`:message-type` exception). */
function frame(kind: 'event' | 'exception', type: string, payload: unknown): Uint8Array {
  return eventStreamCodec().encode({
    headers: {
      [kind === 'event' ? ':event-type' : ':exception-type']: header(type),
      ':content-type': header('application/json'),
      ':message-type': header(kind),
    },
    body: new Uint8Array(Buffer.from(JSON.stringify(payload))),
  });
}

/**
 * The reply as ConverseStream sends it, one frame per piece: messageStart, each content block's
 * start (tool calls), deltas and stop, messageStop and the metadata with usage — or, for a
 * scripted mid-stream error, the frames up to it and then its exception frame.
 */
function streamFrames(output: Output, reply: ScriptedAnswer): Uint8Array[] {
  const frames = [frame('event', 'messageStart', { role: 'assistant' })];
  const event = (type: string, payload: object) => frames.push(frame('event', type, payload));
  output.output.message.content.forEach((block, contentBlockIndex) => {
    const delta = (piece: object) => event('contentBlockDelta', { contentBlockIndex, delta: piece });
    if ('reasoningContent' in block) {
      const reasoning = block.reasoningContent as {
        redactedContent?: string;
        reasoningText?: { text: string; signature?: string };
      };
      if (reasoning.redactedContent !== undefined)
        delta({ reasoningContent: { redactedContent: reasoning.redactedContent } });
      for (const text of textPieces(reasoning.reasoningText?.text ?? '')) delta({ reasoningContent: { text } });
      const signature = reasoning.reasoningText?.signature;
      if (signature !== undefined) delta({ reasoningContent: { signature } });
    } else if ('toolUse' in block) {
      const { toolUseId, name, input } = block.toolUse as { toolUseId: string; name: string; input: unknown };
      event('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId, name } } });
      for (const piece of textPieces(typeof input === 'string' ? input : JSON.stringify(input))) {
        delta({ toolUse: { input: piece } });
      }
    } else {
      for (const text of textPieces(String(block.text))) delta({ text });
    }
    event('contentBlockStop', { contentBlockIndex });
  });
  event('messageStop', { stopReason: output.stopReason });
  event('metadata', { usage: output.usage, metrics: output.metrics });
  return withMidStreamError(frames, reply, (failure) => {
    // Exception frames name their type in lower camel case (`throttlingException`).
    const type = failure.type ?? 'modelStreamErrorException';
    return frame('exception', type.charAt(0).toLowerCase() + type.slice(1), {
      message: failure.message ?? 'The model stream failed.',
    });
  });
}
