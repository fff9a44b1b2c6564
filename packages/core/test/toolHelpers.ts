import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executeTool, type Tool } from '../src/index.js';

export const tempWorkspace = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-test-')));

let seq = 0;
/** Calls a tool the way the interpreter does: zod validation, timeout, Result → observation. */
export async function callTool(tool: Tool, args: unknown, signal?: AbortSignal) {
  const id = `t${++seq}`;
  const effect = {
    type: 'callTool' as const,
    id,
    call: { id, name: tool.spec.name, arguments: JSON.stringify(args) },
    args,
    parallelSafe: false,
  };
  const event = await executeTool(
    { ...effect, ...(tool.spec.timeoutMs ? { timeoutMs: tool.spec.timeoutMs } : {}) },
    tool,
    {},
    signal,
  );
  return { output: event.output, isError: event.isError === true };
}
