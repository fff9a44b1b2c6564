// The raw loop checking the tool's arguments with zod, as ours does with a zod tool: what zod itself costs.
import { z } from 'zod';
import { rawLoopWith } from './raw.mjs';

export const entry = ['openai', 'zod'];

const args = z.object({ a: z.number(), b: z.number() });
export const create = rawLoopWith((input) => args.parse(input));
