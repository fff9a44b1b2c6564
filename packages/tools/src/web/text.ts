/** Runs of whitespace (newlines included) become one space; the ends are trimmed. */
export const collapseWhitespace = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The text, or its first `max` characters followed by a marker saying how much was cut. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n…[cut: ${text.length - max} more characters]`;
}
