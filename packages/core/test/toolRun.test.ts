import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunItem } from '../src/shell/runItems.js';
import { createToolRun } from '../src/shell/toolRun.js';
import { defineTool } from '../src/tools/defineTool.js';

/** A tool with a per-run resource (a counter, opened once per run) and per-run data (its calls so far). */
function counterTool(events: string[]) {
  let opened = 0;
  return defineTool({
    name: 'count',
    description: 'Counts its calls in this run.',
    parameters: z.object({ by: z.number().int() }),
    open: () => {
      const id = ++opened;
      events.push(`open ${id}`);
      return { id, total: 0 };
    },
    close: (counter) => void events.push(`close ${counter.id}`),
    execute: ({ by }, scope, counter) => {
      counter.total += by;
      scope.setData({ calls: ((scope.data as { calls?: number } | undefined)?.calls ?? 0) + 1 });
      return `counter ${counter.id}: ${counter.total}`;
    },
  });
}

describe('createToolRun: tool calls without an agent, as one run makes them', () => {
  it('keeps each run its own resources and data, and closes them with the run', async () => {
    const events: string[] = [];
    const count = counterTool(events);
    const first = createToolRun();
    const second = createToolRun();
    expect(await first.call(count, { by: 2 })).toMatchObject({ type: 'toolCompleted', output: 'counter 1: 2' });
    expect(await first.call(count, { by: 3 })).toMatchObject({ output: 'counter 1: 5' });
    expect(await second.call(count, { by: 1 })).toMatchObject({ output: 'counter 2: 1' });
    expect(first.dataOf('count')).toEqual({ calls: 2 });
    expect(second.dataOf('count')).toEqual({ calls: 1 });
    expect(first.runId).not.toBe(second.runId);
    await first.close();
    expect(events).toEqual(['open 1', 'open 2', 'close 1']);
    await second.close();
    expect(events).toEqual(['open 1', 'open 2', 'close 1', 'close 2']);
  });

  it('reports bad arguments and failures as error observations, and keeps images', async () => {
    const tools = createToolRun({ workspace: '/srv/ws' });
    const picture = defineTool({
      name: 'picture',
      description: 'A picture of the workspace.',
      parameters: z.object({}),
      execute: (_, scope) => ({
        output: `of ${scope.workspace}`,
        image: { base64: 'iVBORw0K', mimeType: 'image/png' },
      }),
    });
    expect(await tools.call(picture, {})).toMatchObject({
      output: 'of /srv/ws',
      image: { base64: 'iVBORw0K', mimeType: 'image/png' },
    });
    const invalid = await tools.call(counterTool([]), { by: 'two' });
    expect(invalid).toMatchObject({ isError: true });
    expect(invalid.type === 'toolCompleted' && invalid.output).toMatch(
      /^Error: invalid arguments for count:\n✖ .*\n {2}→ at by$/,
    );
    await tools.close();
  });

  it('cancels a call when its own signal aborts, and every call still going when the run closes', async () => {
    const items: RunItem[] = [];
    const tools = createToolRun({ onItem: (item) => items.push(item) });
    const waiting = defineTool({
      name: 'wait',
      description: 'Waits forever.',
      parameters: z.object({}),
      execute: (_, scope) => {
        scope.emit({ type: 'observation', observation: { kind: 'stepStarted', step: 1, maxSteps: 1 } });
        return new Promise<string>(() => {});
      },
    });
    const caller = new AbortController();
    const cancelled = tools.call(waiting, {}, { signal: caller.signal });
    caller.abort();
    expect(await cancelled).toMatchObject({ output: 'Error: wait was cancelled.', isError: true });
    const ended = tools.call(waiting, {});
    await tools.close();
    expect(await ended).toMatchObject({ output: 'Error: wait was cancelled.', isError: true });
    expect(items).toHaveLength(2);
    expect(items[0]?.origin).toEqual([{ tool: 'wait', effectId: 'call-1' }]);
  });

  it('stops a tool at the time limit given for tools without their own', async () => {
    const tools = createToolRun({ toolTimeoutMs: 50 });
    const slow = defineTool({
      name: 'slow',
      description: 'Never answers.',
      parameters: z.object({}),
      execute: () => new Promise<string>(() => {}),
    });
    expect(await tools.call(slow, {})).toMatchObject({ output: 'Error: slow timed out after 50 ms and was stopped.' });
    await tools.close();
  });
});
