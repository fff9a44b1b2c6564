import { z } from 'zod';
import { defineTool } from './defineTool.js';

/**
 * ask_human: answered by the host (a terminal prompt, a callback, or a paused run resumed
 * later), never by a blocking read. The interpreter routes it; `execute` is not called.
 */
export const askHuman = defineTool({
  name: 'ask_human',
  description:
    'Ask the user a question and wait for the answer. Use it when you need information or a decision only they have.',
  parameters: z.object({ inquire: z.string().describe('The question to ask the user.') }),
  human: { questionArg: 'inquire' },
  execute: () => {
    throw new Error('ask_human is answered by the host, not executed');
  },
});
