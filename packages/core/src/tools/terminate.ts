import { defineTool } from './defineTool.js';
import { lazySchema } from './lazySchema.js';

const status = 'How the task ended.';

/** terminate's arguments (zod is loaded on the first call, not at import). */
export const terminateParameters = lazySchema(
  {
    type: 'object',
    properties: { status: { type: 'string', enum: ['success', 'failure'], description: status } },
    required: ['status'],
  },
  (z) => z.object({ status: z.enum(['success', 'failure']).describe(status) }),
);

/** terminate: ends the run when the task is done, or cannot be done. */
export const terminate = defineTool({
  name: 'terminate',
  description:
    'Finish the interaction when the request is met or cannot go further. Say in your message what was done before calling it.',
  parameters: terminateParameters,
  terminal: true,
  execute: ({ status }) => `The interaction has been completed with status: ${status}`,
});
