/**
 * Values that change from run to run (a workspace path, a local server's URL), written into a
 * transcript as `{{name}}` so that a recording replays in another run with its own values.
 */
export type Placeholders = Readonly<Record<string, string>>;

/** A string as it appears inside JSON text (a path with a quote or backslash in a tool call's arguments). */
const escaped = (value: string) => JSON.stringify(value).slice(1, -1);

/** `text` with each placeholder's value (as written, and as escaped inside JSON) put back as `{{name}}`. */
export function toPlaceholders(text: string, placeholders: Placeholders): string {
  // Longest first, so that a value containing another is replaced whole.
  const entries = Object.entries(placeholders)
    .filter(([, value]) => value !== '')
    .sort(([, a], [, b]) => b.length - a.length);
  let out = text;
  for (const [name, value] of entries) {
    out = out.replaceAll(value, `{{${name}}}`);
    if (escaped(value) !== value) out = out.replaceAll(escaped(value), `{{${name}}}`);
  }
  return out;
}

/** `text` with each `{{name}}` given a value replaced by it (`json`: escaped, for JSON text). */
export function fromPlaceholders(text: string, placeholders: Placeholders, json = false): string {
  let out = text;
  for (const [name, value] of Object.entries(placeholders))
    out = out.replaceAll(`{{${name}}}`, json ? escaped(value) : value);
  return out;
}

/** Every string inside a JSON value, mapped. */
export function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, map)]));
  return value;
}
