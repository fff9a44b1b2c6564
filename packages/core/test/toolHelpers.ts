import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineTool } from '../src/tools/defineTool.js';

/** Whether this process is root (the sandbox then drops model code to a per-call uid). */
export const isRoot = process.getuid?.() === 0;

/** Whether bubblewrap runs here at all (the sandbox tests that need it say so). */
export const bwrapWorks = (() => {
  try {
    execFileSync('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export const tempWorkspace = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-test-')));

/** A tool that answers with its text: the smallest real tool for runs in tests. */
export const echo = defineTool({
  name: 'echo',
  description: 'Echo',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
