import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { LlmPort } from '../src/llm/llm.js';
import { portComplete } from '../src/llm/llm.js';
import { err } from '../src/result.js';
import { linkAbort } from '../src/shell/abort.js';
import { run } from '../src/shell/run.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { defineTool } from '../src/tools/defineTool.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('linkAbort', () => {
  it('aborts the child with the parent’s own reason, and resolves `stopped`', async () => {
    const parent = new AbortController();
    const link = linkAbort(parent.signal);
    const { signal } = link;
    expect(signal.aborted).toBe(false);
    const reason = new Error('the run was stopped');
    parent.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
    expect(link.timedOut()).toBe(false);
    await expect(link.stopped).resolves.toBeUndefined();
    link.dispose();
  });

  it('hands out one signal, so a listener added to it hears the abort', () => {
    const parent = new AbortController();
    const link = linkAbort(parent.signal);
    const first = link.signal;
    const second = link.signal;
    expect(second).toBe(first);
    const heard: unknown[] = [];
    first.addEventListener('abort', () => heard.push(first.reason));
    parent.abort('stop');
    expect(heard).toEqual(['stop']);
  });

  it('a signal made only after the parent aborted is already aborted, with the parent’s reason', () => {
    const parent = new AbortController();
    const link = linkAbort(parent.signal);
    parent.abort('late look');
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe('late look');
  });

  it('tells onStop once when it stops, and says it has stopped', async () => {
    vi.useFakeTimers();
    const parent = new AbortController();
    const stops: string[] = [];
    const link = linkAbort(parent.signal, 50, () => stops.push('stopped'));
    expect(link.isStopped).toBe(false);
    // Asked for before it stops, twice: one promise, which the stop resolves.
    const waiting = link.stopped;
    expect(link.stopped).toBe(waiting);
    await vi.advanceTimersByTimeAsync(50);
    expect(link.isStopped).toBe(true);
    parent.abort('later');
    expect(stops).toEqual(['stopped']);
    await expect(waiting).resolves.toBeUndefined();
    // Asked for only now: already resolved.
    await expect(link.stopped).resolves.toBeUndefined();
    link.dispose();
  });

  it('a parent aborted before the link was made tells onStop at once, and sets no timer', async () => {
    vi.useFakeTimers();
    const stops: number[] = [];
    const link = linkAbort(AbortSignal.abort('gone'), 50, () => stops.push(1));
    expect(stops).toEqual([1]);
    expect(link.isStopped).toBe(true);
    await vi.advanceTimersByTimeAsync(50);
    // It was the parent, not a time limit.
    expect(link.timedOut()).toBe(false);
    link.dispose();
  });

  it('a parent aborted before the link was made stops it at once', async () => {
    const reason = new Error('already gone');
    const link = linkAbort(AbortSignal.abort(reason), 60_000);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe(reason);
    await expect(link.stopped).resolves.toBeUndefined();
    expect(link.timedOut()).toBe(false);
    link.dispose();
  });

  it('a parent that reports itself aborted without a reason gives the child an "aborted" error', () => {
    // Not an AbortController's signal (those always carry a reason): a hand-made one.
    const bare = { aborted: true, reason: undefined, addEventListener() {}, removeEventListener() {} };
    const link = linkAbort(bare as unknown as AbortSignal);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBeInstanceOf(Error);
    expect((link.signal.reason as Error).message).toBe('aborted');
  });

  it('fires its own time limit exactly when it passes, with a reason naming it, and says it timed out', async () => {
    vi.useFakeTimers();
    const parent = new AbortController();
    const link = linkAbort(parent.signal, 50);
    let stopped = false;
    void link.stopped.then(() => {
      stopped = true;
    });
    const { signal } = link;
    await vi.advanceTimersByTimeAsync(49);
    expect(signal.aborted).toBe(false);
    expect(link.timedOut()).toBe(false);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('timed out after 50 ms');
    expect(link.timedOut()).toBe(true);
    expect(stopped).toBe(true);
    expect(parent.signal.aborted).toBe(false);
  });

  it('keeps the first reason: the parent aborting after the time limit does not replace it', async () => {
    vi.useFakeTimers();
    const parent = new AbortController();
    const link = linkAbort(parent.signal, 10);
    await vi.advanceTimersByTimeAsync(10);
    parent.abort('too late');
    // Made after both: it must carry the reason that stopped the link first.
    expect((link.signal.reason as Error).message).toBe('timed out after 10 ms');
  });

  it('keeps the first reason: a time limit passing after the parent aborted does not replace it', async () => {
    vi.useFakeTimers();
    const parent = new AbortController();
    const link = linkAbort(parent.signal, 10);
    parent.abort('the parent first');
    await vi.advanceTimersByTimeAsync(10);
    expect(link.signal.reason).toBe('the parent first');
  });

  it('without a time limit, sets no timer', () => {
    vi.useFakeTimers();
    const link = linkAbort(new AbortController().signal);
    expect(vi.getTimerCount()).toBe(0);
    expect(link.signal.aborted).toBe(false);
    link.dispose();
  });

  it('works without a parent: only its time limit stops it', async () => {
    vi.useFakeTimers();
    const link = linkAbort(undefined, 5);
    expect(link.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(5);
    expect(link.signal.aborted).toBe(true);
    expect(link.timedOut()).toBe(true);
    link.dispose();
  });

  it('dispose lets go of the parent and stops the timer: nothing fires afterwards', async () => {
    vi.useFakeTimers();
    const parent = new AbortController();
    const link = linkAbort(parent.signal, 100);
    const { signal } = link;
    link.dispose();
    await vi.advanceTimersByTimeAsync(1_000);
    parent.abort('after the work was over');
    expect(signal.aborted).toBe(false);
    expect(link.timedOut()).toBe(false);
  });

  it('links made one after another on a long-lived parent leave one listener on it, not one each', () => {
    const parent = new AbortController();
    const links = Array.from({ length: 5 }, () => linkAbort(parent.signal, 1_000));
    for (const link of links.slice(0, 4)) link.dispose();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    parent.abort('stop');
    // Only the link still in use hears it.
    expect(links.map((link) => link.signal.aborted)).toEqual([false, false, false, false, true]);
    links[4]?.dispose();
  });
});

/** A model that waits until the run's signal aborts; `asked` resolves with the signal it was given. */
function hangingLlm() {
  let ask: (signal: AbortSignal | undefined) => void = () => {};
  const asked = new Promise<AbortSignal | undefined>((resolve) => {
    ask = resolve;
  });
  const llm: LlmPort = {
    model: 'hanging',
    complete: portComplete(
      (_request, options) =>
        new Promise((resolve) => {
          options?.signal?.addEventListener('abort', () => resolve(err({ kind: 'aborted', message: 'aborted' })));
          ask(options?.signal);
        }),
    ),
  };
  return { llm, asked };
}

describe('cancelling a run', () => {
  const agent = createAgent({ name: 'a' });

  const cancelWith = async (abort: (controller: AbortController) => void) => {
    const controller = new AbortController();
    const { llm, asked } = hangingLlm();
    const running = run(agent, 'go', { llm, signal: controller.signal });
    const signal = await asked;
    abort(controller);
    const outcome = await running;
    expect(signal?.aborted).toBe(true);
    return outcome;
  };

  it('an Error reason becomes the run’s error, by its message', async () => {
    const outcome = await cancelWith((c) => c.abort(new Error('the user pressed stop')));
    expect(outcome).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'the user pressed stop' },
    });
  });

  it('a string reason is the run’s error as it is', async () => {
    const outcome = await cancelWith((c) => c.abort('shutting down'));
    expect(outcome).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'shutting down' },
    });
  });

  it('no reason (the platform’s AbortError) reads "the run was cancelled"', async () => {
    const outcome = await cancelWith((c) => c.abort());
    expect(outcome).toMatchObject({
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'the run was cancelled' },
    });
  });

  it('an Error named AbortError reads "the run was cancelled", not its message', async () => {
    const abortError = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    const outcome = await cancelWith((c) => c.abort(abortError));
    expect(outcome.error?.message).toBe('the run was cancelled');
  });

  it('a reason that is neither an Error nor a string reads "the run was cancelled"', async () => {
    const outcome = await cancelWith((c) => c.abort({ code: 42 }));
    expect(outcome.error?.message).toBe('the run was cancelled');
  });

  it('a signal aborted before the run starts ends it as cancelled without asking the model', async () => {
    const llm = scriptedLlm([{ content: 'never sent' }]);
    const outcome = await run(agent, 'go', { llm, signal: AbortSignal.abort('not today') });
    expect(outcome).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'not today' },
    });
    expect(llm.requests).toHaveLength(0);
  });

  it('a tool running when the run is cancelled sees the run’s reason on its own signal', async () => {
    const controller = new AbortController();
    let seen: unknown;
    const wait = defineTool({
      name: 'wait',
      description: 'Waits to be stopped',
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise<string>((resolve) => {
          signal.addEventListener('abort', () => {
            seen = signal.reason;
            resolve('stopped');
          });
          controller.abort('enough');
        }),
    });
    const outcome = await run(createAgent({ name: 'a', tools: [wait] }), 'go', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'wait' }] }]),
      signal: controller.signal,
    });
    expect(seen).toBe('enough');
    expect(outcome).toMatchObject({ finishReason: 'cancelled', error: { code: 'CANCELLED', message: 'enough' } });
    const observation = outcome.state.messages.find((m) => m.role === 'tool');
    expect(observation?.content).toBe('Error: cancelled before it finished.');
  });
});
