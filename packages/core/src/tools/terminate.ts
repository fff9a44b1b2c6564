import { z } from 'zod';
import { defineTool } from './defineTool.js';

/** terminate: ends the run when the task is done, or cannot be done. */
export const terminate = defineTool({
  name: 'terminate',
  description:
    'Finish the interaction when the request is met or cannot go further. Say in your message what was done before calling it.',
  parameters: z.object({ status: z.enum(['success', 'failure']).describe('How the task ended.') }),
  terminal: true,
  execute: ({ status }) => `The interaction has been completed with status: ${status}`,
});
