import type * as Zod from 'zod';
import type { JsonSchema } from '../kernel/tool.js';
import { loadZod } from '../lazyModule.js';

/**
 * A zod schema for `defineTool` that loads zod only when a call is first validated: until then
 * `toJSONSchema()` answers with `jsonSchema`, written out by hand (the `io: 'input'` JSON Schema
 * of `build`'s schema; test/lazySchema.test.ts checks that they agree). Everything else is the
 * real schema, built on first use.
 */
export function lazySchema<S extends Zod.ZodType>(jsonSchema: JsonSchema, build: (z: typeof Zod.z) => S): S {
  let schema: S | undefined;
  const real = (): S => {
    schema ??= build(loadZod().z);
    return schema;
  };
  return new Proxy({} as S, {
    get(_target, key) {
      if (key === 'toJSONSchema') return () => structuredClone(jsonSchema);
      // defineTool asks whether `safeParse` is a function when the tool is defined: answering
      // with a stand-in keeps that question from building the schema (and loading zod).
      if (key === 'safeParse') return (value: unknown) => real().safeParse(value);
      const value: unknown = Reflect.get(real(), key);
      return typeof value === 'function' ? value.bind(real()) : value;
    },
    has: (_target, key) => key in real(),
  });
}
