/**
 * Text of a page's making as the page state shows it: at most `max` characters, and with the
 * characters that are invisible or reorder what is read (controls, bidi overrides, zero-width
 * characters, line and paragraph separators) written as `\u202e` escapes, so that a title or a URL
 * cannot hide or reverse text or start a line of its own.
 */
export function shown(text: string, max: number): string {
  return clip(escapeInvisible(clip(text, max)), max);
}

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** The invisible and reordering characters of `text` as `\uXXXX` escapes. */
export const escapeInvisible = (text: string): string =>
  text.replace(INVISIBLE, (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);

/** At most `max` characters, an ellipsis marking a cut. */
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
