import { A2A_CONTENT_TYPE } from '@a2a-js/sdk';
import { type AccessPolicy, givenToken, newToken, refusalOf } from '@openmanus/core/internal';
import type { NextFunction, Request, Response } from 'express';

export { LOOPBACK_HOSTS } from '@openmanus/core/internal';

/** The token given (checked to be long enough), else a new one no one can guess. */
export const tokenOf = (given: string | undefined): string => (given === undefined ? newToken() : givenToken(given));

/**
 * Express middleware refusing, before any of the body is read, a request for a Host this server
 * does not answer for (421), from another site's page (403), without the bearer token (401) or
 * posting anything but JSON (415): the checks @openmanus/server makes. `open` requests (the agent
 * card: it says how to authenticate) need no token.
 */
export function accessCheck(policy: AccessPolicy, open: (request: Request) => boolean) {
  return (request: Request, response: Response, next: NextFunction) => {
    const refusal = refusalOf(
      {
        method: request.method,
        host: request.headers.host ?? '',
        header: (name) => {
          const value = request.headers[name];
          // A2A's HTTP+JSON binding may name its JSON bodies by a media type of its own.
          if (name === 'content-type' && value?.split(';')[0]?.trim().toLowerCase() === A2A_CONTENT_TYPE)
            return 'application/json';
          return value;
        },
      },
      policy,
      open(request),
    );
    if (!refusal) return next();
    response
      .status(refusal.status)
      .set({ connection: 'close', 'cache-control': 'no-store', ...refusal.headers })
      .json({ error: refusal.error });
  };
}
