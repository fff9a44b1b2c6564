import { hasErrorCode, OpenManusError } from '@openmanus/core';

/**
 * Why a page was not read (`fetchWebPage`'s error): the address was refused, the site answered
 * with an HTTP error (`status`), the content is not text, or reading it failed or ran out of time.
 * The message is the one web_fetch gives the model; `cause` what was thrown, where something was.
 */
export class WebFetchError extends OpenManusError<'WEB_FETCH_FAILED'> {
  static readonly codes = ['WEB_FETCH_FAILED'] as const;
  override readonly name = 'WebFetchError';
  /** The site's HTTP status, when it answered with one other than 2xx. */
  readonly status?: number;
  constructor(message: string, options: { readonly status?: number; readonly cause?: unknown } = {}) {
    super('WEB_FETCH_FAILED', message, options);
    if (options.status !== undefined) this.status = options.status;
  }
  static override isInstance(value: unknown): value is WebFetchError {
    return hasErrorCode(value, WebFetchError.codes);
  }
}
