/** A piece of a long text, and where the next one starts. */
export interface Chunk {
  readonly text: string;
  readonly start: number;
  /** Where it ends (exclusive): the next chunk's `start_from_char`. */
  readonly end: number;
  readonly total: number;
  /** Whether text remains after it. */
  readonly more: boolean;
}

/** A cut is made at a paragraph, else a line, else a word boundary in the last fifth of the chunk. */
const BOUNDARIES = ['\n\n', '\n', ' '];

/**
 * The piece of `text` that starts at `start` and holds at most `maxChars` characters, cut where a
 * paragraph (else a line, else a word) ends when one does near its end. An error when `start` is
 * past the end.
 */
export function chunkAt(text: string, start: number, maxChars: number): Chunk | { readonly error: string } {
  if (!Number.isInteger(start) || start < 0)
    return { error: `start_from_char must be a whole number ≥ 0, not ${start}` };
  if (start > 0 && start >= text.length) {
    return { error: `start_from_char ${start} is past the end of the content (${text.length} characters)` };
  }
  let end = Math.min(text.length, start + maxChars);
  if (end < text.length) {
    const floor = start + Math.floor(maxChars * 0.8);
    for (const boundary of BOUNDARIES) {
      const at = text.lastIndexOf(boundary, end - boundary.length);
      if (at >= floor) {
        end = at + boundary.length;
        break;
      }
    }
  }
  return { text: text.slice(start, end), start, end, total: text.length, more: end < text.length };
}
