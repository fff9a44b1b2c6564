import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineTool } from '../src/index.js';

export const tempWorkspace = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-test-')));

/** A tool that answers with its text: the smallest real tool for runs in tests. */
export const echo = defineTool({
  name: 'echo',
  description: 'Echo',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
