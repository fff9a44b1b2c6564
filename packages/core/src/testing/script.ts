/** A scripted model reply, shared by the in-process model and the HTTP server. */
export interface ScriptedToolCall {
  readonly name: string;
  /** An object is sent as JSON; a string is sent verbatim (to script malformed arguments). */
  readonly arguments?: unknown;
  readonly id?: string;
  /** The server sends `arguments` as a JSON object, as some non-conformant servers do. */
  readonly objectArguments?: boolean;
}

export interface ScriptedAnswer {
  readonly content?: string;
  readonly toolCalls?: readonly ScriptedToolCall[];
  /** What the reply reports it used (the server sends the cache and reasoning counts as OpenAI does). */
  readonly usage?: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly cachedInputTokens?: number;
    readonly cacheWriteTokens?: number;
    readonly reasoningTokens?: number;
  };
  /** The model's reasoning, where the wire carries it (Anthropic's thinking blocks, Bedrock's reasoning content). */
  readonly reasoning?: readonly { readonly text: string; readonly signature?: string; readonly redacted?: string }[];
  /** Why the reply ended, when not the default (`tool_calls` with calls, else `stop`): `length` scripts a reply cut at the output limit. */
  readonly finishReason?: 'stop' | 'tool_calls' | 'length' | 'content_filter';
  /**
   * HTTP server only, streaming: after this many events the server sends an error in the wire's
   * own form (an `overloaded_error` event, an exception frame) and ends the stream.
   */
  readonly midStreamError?: { readonly after: number; readonly type?: string; readonly message?: string };
  /** HTTP server only: the `usage` object sent as it is, in place of the one `usage` makes (a provider's own fields). */
  readonly wireUsage?: Readonly<Record<string, unknown>>;
  /** Wait before answering (to script a slow model). */
  readonly delayMs?: number;
  /**
   * HTTP server only: send the headers, then the body one piece at a time with this pause before
   * each piece (a piece is one server-sent event when streaming, else 16 characters of the JSON).
   */
  readonly trickleMs?: number;
  /** HTTP server only: after this many pieces of the body, send nothing more and keep the connection open. */
  readonly stallAfter?: number;
  /** HTTP server only: after this many pieces of the body, cut the connection. */
  readonly cutAfter?: number;
  /** HTTP server only: after this many pieces of the body, end the reply as if it were whole (a truncated reply). */
  readonly endAfter?: number;
}

export interface ScriptedFailure {
  readonly error: {
    /** Without a status the call fails as a network error (the HTTP server cuts the connection). */
    readonly status?: number;
    readonly message?: string;
    readonly code?: string;
    /** The provider's error type where its wire has one (Anthropic's `overloaded_error`, Bedrock's `ThrottlingException`). */
    readonly type?: string;
    /** Sent as `Retry-After` (seconds). */
    readonly retryAfter?: number;
    /** Sent as `retry-after-ms`. */
    readonly retryAfterMs?: number;
  };
  readonly delayMs?: number;
}

export type ScriptedReply = ScriptedAnswer | ScriptedFailure;

/** A reply, or a function of the request that makes one (for loops and request-dependent replies). */
export type ScriptEntry<Request> = ScriptedReply | ((request: Request, index: number) => ScriptedReply);

export const isFailure = (reply: ScriptedReply): reply is ScriptedFailure => 'error' in reply;

export const callArguments = (call: ScriptedToolCall): string =>
  typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});

export const callId = (call: ScriptedToolCall, reply: number, index: number): string =>
  call.id ?? `call_${reply}_${index}`;

export const scriptExhausted = (used: number) => `scripted model: the script is exhausted after ${used} replies`;

/** A list of replies, or one function answering every request (for endless or stateless servers). */
export type Script<Request> =
  | readonly ScriptEntry<Request>[]
  | ((request: Request, index: number) => ScriptedReply | undefined);

/** Takes the next entry of a script and resolves it against the request. */
export function nextReply<Request>(script: Script<Request>, used: number, request: Request): ScriptedReply | undefined {
  if (typeof script === 'function') return script(request, used);
  const entry = script[used];
  if (entry === undefined) return undefined;
  return typeof entry === 'function' ? entry(request, used) : entry;
}

/** Replies a list script still holds (a function script never runs out). */
export const unused = <Request>(script: Script<Request>, used: number): number =>
  typeof script === 'function' ? 0 : Math.max(0, script.length - used);

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
