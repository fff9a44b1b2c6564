/**
 * `{ ...base, ...changes }` where `changes` may add keys `base` lacks. On Node 20's V8 an object
 * spread followed by a new key gets a hidden class of its own every time, so every later read of
 * such an object misses its inline cache (a runtime lookup); `Object.assign` onto a fresh object
 * goes through shared transitions instead. Spreads that only replace keys are fine as they are.
 */
export const extend = <T extends object>(base: T, changes: Partial<T>): T => Object.assign({}, base, changes);
