import { oursWith } from './oursAgent.mjs';

export const entry = ['@openmanus/core'];

// The tool described by a plain JSON Schema, as the raw loop sends it: no zod in the process.
export const create = oursWith({
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
});
