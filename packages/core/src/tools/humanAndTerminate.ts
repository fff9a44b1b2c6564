import { z } from 'zod';
import { defineTool } from '../tool.js';

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

/** terminate: ends the run when the task is done, or cannot be done. */
export const terminate = defineTool({
  name: 'terminate',
  description:
    'Finish the interaction when the request is met or cannot go further. Say in your message what was done before calling it.',
  parameters: z.object({ status: z.enum(['success', 'failure']).describe('How the task ended.') }),
  terminal: true,
  execute: ({ status }) => `The interaction has been completed with status: ${status}`,
});
