/**
 * `convert`, its result for each key kept as long as the key lives: a run's requests repeat its
 * messages and its agent's tool list (the same objects each time), converted once instead of at
 * every request.
 */
export function memoized<Key extends object, Value>(convert: (key: Key) => Value): (key: Key) => Value {
  const kept = new WeakMap<Key, Value>();
  return (key) => {
    let value = kept.get(key);
    if (value === undefined) {
      value = convert(key);
      kept.set(key, value);
    }
    return value;
  };
}
