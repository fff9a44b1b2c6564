import { z } from 'zod';
import { oursWith } from './oursAgent.mjs';

export const entry = ['@openmanus/core'];

// The tool defined with zod, as every peer defines theirs.
export const addArgs = z.object({ a: z.number(), b: z.number() });
export const create = oursWith(addArgs);
