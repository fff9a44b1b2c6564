import { callArguments, isFailure, type ScriptedAnswer, scriptExhausted } from './script.js';
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

/** A part of a Gemini message, as the API takes and gives them. */
export interface GeminiPart {
  readonly text?: string;
  readonly thought?: boolean;
  readonly thoughtSignature?: string;
  readonly inlineData?: { readonly mimeType: string; readonly data: string };
  readonly functionCall?: { readonly id?: string; readonly name: string; readonly args?: unknown };
  readonly functionResponse?: {
    readonly id?: string;
    readonly name: string;
    readonly response: unknown;
    readonly parts?: readonly GeminiPart[];
  };
  readonly [key: string]: unknown;
}

/** A `generateContent` / `streamGenerateContent` request body as the server received it. */
export interface RecordedGeminiRequest {
  readonly contents: readonly { readonly role: string; readonly parts: readonly GeminiPart[] }[];
  readonly systemInstruction?: { readonly parts: readonly { readonly text: string }[] };
  readonly tools?: readonly Record<string, unknown>[];
  readonly toolConfig?: Record<string, unknown>;
  readonly generationConfig?: Record<string, unknown>;
  readonly [key: string]: unknown;
}

export type GeminiServerOptions = StandInOptions<RecordedGeminiRequest>;

/** The Gemini stand-in; its `paths` name the model and the call (`/v1beta/models/<model>:streamGenerateContent?alt=sse`). */
export interface GeminiServer extends StandInServer<RecordedGeminiRequest> {
  /** `http://127.0.0.1:<port>/v1beta`, ready for `createGoogleGenerativeAI({ baseURL })`. */
  readonly baseURL: string;
}

/** The status Google names for each HTTP status it answers with. */
const STATUSES: ErrorNames = {
  byStatus: {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    429: 'RESOURCE_EXHAUSTED',
    500: 'INTERNAL',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
  },
  server: 'INTERNAL',
  client: 'FAILED_PRECONDITION',
};

const errorBody = (code: number, message: string, status: string) => ({ error: { code, message, status } });

const MODEL_CALL = /\/models\/[^/]+:(generateContent|streamGenerateContent)$/;

/**
 * A real HTTP server on 127.0.0.1 (random port) speaking the Gemini API as `@ai-sdk/google` calls
 * it (`POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`), answering
 * from a script: text, thoughts, function calls, usage with cached and thought tokens, Google's
 * errors (429 `RESOURCE_EXHAUSTED`, 503 `UNAVAILABLE`, …) with Retry-After, and slow, stalled or cut replies.
 *
 * It refuses, as Gemini does, a request without contents and a turn of function calls that the
 * next turn does not answer with as many function responses.
 *
 * Gemini signs function calls rather than thoughts: a scripted reasoning part without text but
 * with a signature is sent as the `thoughtSignature` of the reply's first function call.
 */
export async function startGeminiServer(options: GeminiServerOptions): Promise<GeminiServer> {
  const server = await startScriptedHttp<RecordedGeminiRequest>({
    script: options.script,
    keepRequests: options.keepRequests,
    route(req, res, path) {
      if (req.method === 'POST' && MODEL_CALL.test(path)) return false;
      sendJson(res, 404, errorBody(404, `no route ${req.method} ${req.url}`, 'NOT_FOUND'));
      return true;
    },
    answer: ({ res, path, body, index, reply }) => {
      if (!reply) return sendJson(res, 500, errorBody(500, scriptExhausted(index), 'INTERNAL'));
      const invalid = refusal(body);
      if (invalid) return sendJson(res, 400, errorBody(400, invalid, 'INVALID_ARGUMENT'));
      if (isFailure(reply)) {
        const { type } = reply.error;
        return sendFailure(res, reply.error, (status, message, headers) =>
          sendJson(res, status, errorBody(status, message, type ?? errorNameOf(STATUSES, status)), headers),
        );
      }
      const response = toResponse(reply, index, body);
      if (path.endsWith(':streamGenerateContent')) {
        return deliver(res, streamHeaders, streamEvents(response, reply), reply);
      }
      return sendReply(res, response, reply);
    },
  });
  return standIn(server, { baseURL: `${server.origin}/v1beta` });
}

/** Why Gemini would refuse the request, as it says it: no contents, or a turn of calls not answered by the next one. */
function refusal(body: RecordedGeminiRequest): string | undefined {
  const contents = body.contents ?? [];
  if (contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  for (let i = 0; i < contents.length; i++) {
    const calls = contents[i]?.parts.filter((part) => part.functionCall).length ?? 0;
    if (calls === 0 || i === contents.length - 1) continue;
    const responses = contents[i + 1]?.parts.filter((part) => part.functionResponse).length ?? 0;
    if (responses !== calls) {
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    }
  }
  return undefined;
}

const FINISH_REASONS = { stop: 'STOP', tool_calls: 'STOP', length: 'MAX_TOKENS', content_filter: 'SAFETY' } as const;

/** A call's arguments as Gemini sends them: an object (a scripted string that is no JSON goes as it is). */
function argsOf(call: NonNullable<ScriptedAnswer['toolCalls']>[number]): unknown {
  const text = callArguments(call);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toResponse(reply: ScriptedAnswer, index: number, body: RecordedGeminiRequest) {
  const reasoning = reply.reasoning ?? [];
  const callSignature = reasoning.find((part) => part.text === '' && part.signature)?.signature;
  const parts: GeminiPart[] = [
    ...reasoning
      .filter((part) => part.text !== '')
      .map((part) => ({
        text: part.text,
        thought: true,
        ...(part.signature ? { thoughtSignature: part.signature } : {}),
      })),
    ...(reply.content ? [{ text: reply.content }] : []),
    ...(reply.toolCalls ?? []).map((call, i) => ({
      functionCall: { ...(call.id ? { id: call.id } : {}), name: call.name, args: argsOf(call) },
      ...(i === 0 && callSignature ? { thoughtSignature: callSignature } : {}),
    })),
  ];
  const usage = reply.usage ?? estimatedUsage(JSON.stringify(body.contents ?? []), JSON.stringify(parts));
  const thoughts = usage.reasoningTokens ?? 0;
  const usageMetadata = reply.wireUsage ?? {
    promptTokenCount: usage.inputTokens,
    // Gemini counts thoughts apart from the reply's own tokens.
    candidatesTokenCount: usage.outputTokens - thoughts,
    totalTokenCount: usage.inputTokens + usage.outputTokens,
    ...(usage.cachedInputTokens !== undefined ? { cachedContentTokenCount: usage.cachedInputTokens } : {}),
    ...(usage.reasoningTokens !== undefined ? { thoughtsTokenCount: usage.reasoningTokens } : {}),
  };
  return {
    candidates: [
      {
        content: { role: 'model', parts },
        finishReason: FINISH_REASONS[reply.finishReason ?? 'stop'],
        index: 0,
      },
    ],
    usageMetadata,
    modelVersion: 'scripted',
    responseId: `response-${index}`,
  };
}

/**
 * Server-sent events as Gemini streams them: each thought, piece of text (16 characters) and
 * function call in a chunk of its own, then a chunk with the finish reason and usage; a
 * scripted mid-stream error is an `{"error": …}` chunk after that many events, ending the stream.
 */
function streamEvents(response: ReturnType<typeof toResponse>, reply: ScriptedAnswer): string[] {
  const [candidate] = response.candidates;
  const chunk = (parts: readonly GeminiPart[], last = false) =>
    JSON.stringify({
      candidates: [
        { content: { role: 'model', parts }, ...(last ? { finishReason: candidate?.finishReason } : {}), index: 0 },
      ],
      ...(last ? { usageMetadata: response.usageMetadata } : {}),
      modelVersion: response.modelVersion,
      responseId: response.responseId,
    });
  const chunks: string[] = [];
  for (const part of candidate?.content.parts ?? []) {
    const text = part.text;
    if (text === undefined || text.length <= 16) chunks.push(chunk([part]));
    else for (const piece of textPieces(text)) chunks.push(chunk([{ ...part, text: piece }]));
  }
  chunks.push(chunk([], true));
  const sent = withMidStreamError(chunks, reply, (failure) => {
    const status = failure.type ?? 'UNAVAILABLE';
    const code = Number(Object.entries(STATUSES.byStatus).find(([, name]) => name === status)?.[0] ?? 500);
    return JSON.stringify(errorBody(code, failure.message ?? 'scripted stream error', status));
  });
  return sent.map((data) => `data: ${data}\r\n\r\n`);
}
