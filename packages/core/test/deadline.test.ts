import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// One Node timer for every deadline: checked with a fake clock (the scheduler's own order and
// cancels), and in a real process (a pending deadline keeps it alive, a cancelled one does not).
describe('afterDelay', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
    vi.resetModules();
  });
  afterEach(() => vi.useRealTimers());

  const load = async () => (await import('../src/deadline.js')).afterDelay;

  it('calls each deadline not cancelled once, when its time has come, earliest first', async () => {
    const afterDelay = await load();
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ add: fc.integer({ min: 1, max: 1_000 }) }),
            fc.record({ cancel: fc.nat() }),
            fc.record({ wait: fc.integer({ min: 0, max: 600 }) }),
          ),
          { maxLength: 60 },
        ),
        async (ops) => {
          const fired: { id: number; at: number }[] = [];
          const added: { id: number; due: number; cancel: () => void; cancelled: boolean }[] = [];
          for (const op of ops) {
            if ('add' in op) {
              const id = added.length;
              const due = performance.now() + op.add;
              const cancel = afterDelay(op.add, () => fired.push({ id, at: performance.now() }));
              added.push({ id, due, cancel, cancelled: false });
            } else if ('cancel' in op && added.length > 0) {
              const target = added[op.cancel % added.length];
              if (target && !fired.some((f) => f.id === target.id)) {
                target.cancel();
                target.cancelled = true;
              }
            } else if ('wait' in op) {
              await vi.advanceTimersByTimeAsync(op.wait);
            }
          }
          await vi.advanceTimersByTimeAsync(2_000);
          const expected = added.filter((d) => !d.cancelled).map((d) => d.id);
          expect(fired.map((f) => f.id).sort((a, b) => a - b)).toEqual(expected);
          for (const { id, at } of fired) expect(at).toBeGreaterThanOrEqual((added[id]?.due ?? 0) - 1);
          const dues = fired.map((f) => added[f.id]?.due ?? 0);
          expect(dues).toEqual([...dues].sort((a, b) => a - b));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('still fires the deadlines due after one whose callback threw', async () => {
    const afterDelay = await load();
    const fired: string[] = [];
    afterDelay(10, () => {
      throw new Error('a callback failed');
    });
    afterDelay(10, () => fired.push('same time'));
    afterDelay(500, () => fired.push('later'));
    await expect(vi.advanceTimersByTimeAsync(10)).rejects.toThrow('a callback failed');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(fired).toEqual(['same time', 'later']);
  });

  it('keeps few cancelled deadlines however many come and go under one long timer', async () => {
    const afterDelay = await load();
    const early = afterDelay(50, () => {});
    let late = 0;
    for (let i = 0; i < 10_000; i++) afterDelay(120_000, () => {})();
    afterDelay(120_000, () => late++);
    early();
    await vi.advanceTimersByTimeAsync(121_000);
    expect(late).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

// Through the public API, in a process of its own: a tool that never settles is stopped by its
// time limit even when nothing else keeps the process alive, and a run whose calls all finished
// does not hold its process open for the default 120 s limit it no longer needs.
describe('tool time limits in a real process', () => {
  const runInChild = (tool: string) => {
    const script = `
      const { createAgent, defineTool, run } = await import(${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)});
      const { scriptedLlm } = await import(${JSON.stringify(new URL('../dist/testing/index.js', import.meta.url).href)});
      const tool = defineTool({ name: 'work', description: 'Works', parameters: { type: 'object', properties: {} }, ${tool} });
      const outcome = await run(createAgent({ name: 'a', tools: [tool] }), 'Work.', {
        llm: scriptedLlm([{ toolCalls: [{ name: 'work' }] }, { content: 'done' }]),
      });
      const observation = outcome.state.messages.find((m) => m.role === 'tool');
      console.log(JSON.stringify({ answer: outcome.answer, observation: observation?.content }));
    `;
    // Killed (and the test failed) at 100 s: before a child waiting out the 120 s limit would exit.
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 100_000,
    });
    return JSON.parse(out.trim().split('\n').pop() ?? '{}');
  };

  it('stops a tool that never settles at its limit, though nothing else keeps the process alive', () => {
    const result = runInChild('timeoutMs: 300, execute: () => new Promise(() => {})');
    expect(result.observation).toBe('Error: work timed out after 300 ms and was stopped.');
    expect(result.answer).toBe('done');
  });

  it('lets the process exit once the run is over, without waiting out the 120 s limit', () => {
    const result = runInChild("execute: async () => 'worked'");
    expect(result.observation).toBe('worked');
  });
});
