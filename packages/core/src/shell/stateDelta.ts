/**
 * What changed between two immutable JSON objects, by top-level key, found by identity: an
 * unchanged key costs nothing, a grown array costs its new elements only. Generic over the keys,
 * so new state fields need no code here.
 */
export interface StateDelta {
  /** Keys whose value is replaced. */
  readonly set?: Readonly<Record<string, unknown>>;
  /** Array keys that keep their first `at` elements, followed by `items`. */
  readonly tail?: Readonly<Record<string, ArrayTail>>;
  /** Keys that are gone. */
  readonly unset?: readonly string[];
}

export interface ArrayTail {
  readonly at: number;
  readonly items: readonly unknown[];
}

type JsonObject = Readonly<Record<string, unknown>>;

export function diffState(previousState: object, nextState: object): StateDelta {
  const previous = previousState as JsonObject;
  const next = nextState as JsonObject;
  const set: Record<string, unknown> = {};
  const tail: Record<string, ArrayTail> = {};
  const unset: string[] = [];
  for (const key of Object.keys(next)) {
    const before = previous[key];
    const after = next[key];
    if (after === before) continue;
    // JSON has no undefined: a key set to undefined is a key that is not there.
    if (after === undefined) {
      unset.push(key);
      continue;
    }
    if (Array.isArray(before) && Array.isArray(after)) {
      const at = sharedPrefix(before, after);
      if (at === before.length && at === after.length) continue;
      if (at > 0) {
        tail[key] = { at, items: after.slice(at) };
        continue;
      }
    }
    set[key] = after;
  }
  for (const key of Object.keys(previous)) {
    if (previous[key] !== undefined && !(key in next)) unset.push(key);
  }
  return {
    ...(Object.keys(set).length > 0 && { set }),
    ...(Object.keys(tail).length > 0 && { tail }),
    ...(unset.length > 0 && { unset }),
  };
}

/**
 * How many leading elements the arrays share by identity. A full scan, not a look at the last
 * element: the reducer also replaces elements inside the array (keepNewestImages strips older
 * images, shrinkSupersededObservations shortens older observations), and a pointer comparison per element stays far below the cost of one write.
 */
function sharedPrefix(before: readonly unknown[], after: readonly unknown[]): number {
  const end = Math.min(before.length, after.length);
  let at = 0;
  while (at < end && before[at] === after[at]) at++;
  return at;
}

/** Applies `delta` to `state` in place (a freshly parsed object the caller owns). */
export function applyDelta(state: Record<string, unknown>, delta: StateDelta): void {
  for (const key of delta.unset ?? []) delete state[key];
  Object.assign(state, delta.set);
  for (const [key, { at, items }] of Object.entries(delta.tail ?? {})) {
    const target = state[key];
    if (!Array.isArray(target) || target.length < at)
      throw new Error(`cannot keep ${at} elements of ${key}: it is not an array that long`);
    target.length = at;
    // A loop, not push(...items): spreading a long array overflows the call stack.
    for (const item of items) target.push(item);
  }
}
