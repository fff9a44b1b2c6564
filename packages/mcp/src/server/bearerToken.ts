import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A token no one can guess: 256 random bits. */
export const newToken = (): string => randomBytes(32).toString('base64url');

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Whether an `Authorization` header carries `token` as a bearer token. Compared in constant time
 * (as digests, so that neither the token's length nor its characters leak through timing).
 */
export function bearerCheck(token: string): (authorization: string | undefined) => boolean {
  if (token === '') throw new Error('The bearer token is empty: give one, or none to have one made.');
  const expected = digest(token);
  return (authorization) => {
    const given = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
    return given !== undefined && timingSafeEqual(digest(given), expected);
  };
}
