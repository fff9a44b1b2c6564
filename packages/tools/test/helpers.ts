import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createResourcePool,
  errAsync,
  type LlmPort,
  type Tool,
  type ToolReturn,
  type ToolScope,
} from '@openmanus/core';
import { afterAll } from 'vitest';

const workspaces: string[] = [];
// Imported while a test file is collected, this runs when that file's tests are done.
afterAll(() => Promise.all(workspaces.splice(0).map((dir) => rm(dir, { recursive: true, force: true }))));

/** A fresh workspace directory, by its real path; removed when the test file's tests are done. */
export async function tempWorkspace(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'openmanus-tools-test-')));
  workspaces.push(dir);
  return dir;
}

/** Resolves once `check` holds (checked every few milliseconds), for events that only show in /proc or on disk. */
export async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const noModel: LlmPort = {
  model: 'none',
  complete: () => errAsync({ kind: 'config', message: 'no model here' }),
};

/**
 * Calls a tool's own `execute` within one run's resources, so that a test sees what the tool
 * returns even when the call is cancelled (a run reports a cancelled call itself).
 */
export function directRun(tool: Tool, workspace: string) {
  const pool = createResourcePool();
  let seq = 0;
  return {
    async call(args: unknown, signal: AbortSignal = new AbortController().signal): Promise<ToolReturn> {
      const parsed = tool.parse(args);
      if (!parsed.isOk()) throw new Error(parsed.error);
      const id = `call-${++seq}`;
      const scope: ToolScope = {
        runId: 'direct',
        signal,
        workspace,
        llm: noModel,
        resource: (key, open, close) => pool.get(key, open, close),
        emit: () => {},
        changeTools: async () => {},
        callId: id,
        effectId: id,
        saveProgress: () => {},
        data: undefined,
        setData: () => {},
        addUsage: () => {},
        reportProgress: () => {},
        log: () => {},
        elicit: async () => ({ action: 'cancel' }),
        sample: async () => {
          throw new Error('no model to sample in this test');
        },
      };
      return tool.execute(parsed.value, scope);
    },
    close: () => pool.close(),
  };
}
