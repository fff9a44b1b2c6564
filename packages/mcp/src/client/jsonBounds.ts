/** How deep and how long a JSON value from a server may be before we refuse to handle it. */
export interface JsonLimits {
  /** Levels of objects and arrays (`{}` is 1 deep). */
  readonly depth: number;
  /** Characters of its JSON text, about (what JSON.stringify would write, without escapes). */
  readonly chars: number;
}

/**
 * What of `limits` `value` goes beyond: `depth`, `size`, or `undefined` when it is within both.
 * Walks without recursion and stops at the first excess, so that any value a server sends is safe
 * to measure: JSON.parse takes JSON nested far deeper than JSON.stringify, structuredClone or any
 * recursive walker can handle (they throw a RangeError), so nothing else may see it first.
 */
export function jsonExcess(value: unknown, limits: JsonLimits): 'depth' | 'size' | undefined {
  const pending: [unknown, number][] = [[value, 0]];
  let chars = 0;
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item === 'string') chars += item.length + 2;
    else if (typeof item !== 'object' || item === null) chars += String(item).length;
    else {
      if (depth + 1 > limits.depth) return 'depth';
      chars += 2;
      if (Array.isArray(item)) {
        for (const element of item) {
          chars += 1;
          pending.push([element, depth + 1]);
        }
      } else {
        for (const [key, member] of Object.entries(item)) {
          chars += key.length + 4;
          pending.push([member, depth + 1]);
        }
      }
    }
    if (chars > limits.chars) return 'size';
  }
  return undefined;
}
