// The executors of the test flow, shared by the worker processes (worker.mjs) and the tests'
// in-process runs of the same flow, so both run the very same agents.
import { createAgent } from '@openmanus/core';

export const flowAgents = () => ({
  researcher: createAgent({ name: 'Researcher', description: 'finds facts' }),
  writer: createAgent({ name: 'Writer', description: 'writes the text' }),
});
