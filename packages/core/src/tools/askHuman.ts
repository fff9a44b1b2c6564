import { defineTool } from './defineTool.js';
import { lazySchema } from './lazySchema.js';

const inquire = 'The question to ask the user.';

/** ask_human's arguments (zod is loaded on the first call, not at import). */
export const askHumanParameters = lazySchema(
  { type: 'object', properties: { inquire: { type: 'string', description: inquire } }, required: ['inquire'] },
  (z) => z.object({ inquire: z.string().describe(inquire) }),
);

/**
 * ask_human: answered by the host (a terminal prompt, a callback, or a paused run resumed
 * later), never by a blocking read. The interpreter routes it; `execute` is not called.
 */
export const askHuman = defineTool({
  name: 'ask_human',
  description:
    'Ask the user a question and wait for the answer. Use it when you need information or a decision only they have.',
  parameters: askHumanParameters,
  human: { questionArg: 'inquire' },
  execute: () => {
    throw new Error('ask_human is answered by the host, not executed');
  },
});
