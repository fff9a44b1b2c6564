/**
 * The server sent an error where the reply should be, after its headers said all was well: a
 * 200 whose body, or one of whose stream events, is `{"error": {…}}` (an overloaded or
 * rate-limited upstream, as proxies report them).
 *
 * Internal to the LLM ports, so not of the OpenManusError family: the port turns it into an `LlmError`
 * value before its result leaves it.
 */
export class ReplyError extends Error {
  override readonly name = 'ReplyError';
  constructor(
    message: string,
    /** The error's `code` (a number for some servers, a name for others) and `type`, as sent. */
    readonly code: unknown,
    readonly type: unknown,
  ) {
    super(message);
  }
}

/** The `error` a server sent in place of the reply: an object with a message, or the message itself. */
export function replyErrorOf(error: unknown): ReplyError {
  if (typeof error === 'string') return new ReplyError(error, undefined, undefined);
  const { message, code, type } = (typeof error === 'object' ? error : {}) as Record<string, unknown>;
  const text = typeof message === 'string' && message ? message : JSON.stringify(error);
  return new ReplyError(text, code, type);
}
