/**
 * A property read through one getter shared by every object given it (define it on each with
 * `Object.defineProperty` after the literal), reading what `read` finds on the object itself. On
 * Node 20's V8 a getter written in an object literal leaves the object a dictionary of properties,
 * and one made per object gives each its own hidden class: every read of such objects misses its
 * inline cache. Objects made this way share one class with fast properties, and a spread of one
 * copies the value.
 */
export function liveProperty<Self>(read: (self: Self) => unknown): PropertyDescriptor {
  return {
    get(this: Self) {
      return read(this);
    },
    enumerable: true,
    configurable: true,
  };
}
