import { describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import type { LlmRequest } from '../src/kernel/effects.js';
import { limitConcurrency } from '../src/llm/concurrency.js';
import type { LlmPort } from '../src/llm/llm.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { err, ok, ResultAsync } from '../src/result.js';
import { run } from '../src/shell/run.js';
import { createRunEmitter } from '../src/shell/runItems.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { startOpenAiServer } from '../src/testing/server.js';
import { terminate } from '../src/tools/terminate.js';

const request: LlmRequest = { messages: [{ role: 'user', content: 'hi' }], tools: [], toolChoice: 'auto' };

/** A port whose replies the test releases one by one, recording how many requests are in flight. */
function heldPort() {
  const held: (() => void)[] = [];
  let inFlight = 0;
  let most = 0;
  const port: LlmPort = {
    model: 'held',
    complete: () => {
      inFlight++;
      most = Math.max(most, inFlight);
      return new ResultAsync(
        new Promise((resolve) =>
          held.push(() => {
            inFlight--;
            resolve(ok({ content: 'ok', toolCalls: [] }));
          }),
        ),
      );
    },
  };
  const releaseOne = async () => {
    held.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { port, held, releaseOne, most: () => most };
}

describe('limitConcurrency: at most N requests of a port in flight', () => {
  it('holds the others back and admits them first come, first served', async () => {
    const { port, held, releaseOne, most } = heldPort();
    const limited = limitConcurrency(port, 2);
    const replies = Array.from({ length: 5 }, () => limited.complete(request));
    await new Promise((resolve) => setImmediate(resolve));
    expect(held).toHaveLength(2);
    for (let i = 0; i < 5; i++) await releaseOne();
    expect((await Promise.all(replies)).every((r) => r.isOk())).toBe(true);
    expect(most()).toBe(2);
  });

  it('lets a caller that aborts while waiting leave the queue at once, unsent', async () => {
    const { port, held, releaseOne } = heldPort();
    const limited = limitConcurrency(port, 1);
    const first = limited.complete(request);
    const stop = new AbortController();
    const second = limited.complete(request, { signal: stop.signal });
    const third = limited.complete(request);
    stop.abort();
    expect(await second).toEqual(err({ kind: 'aborted', message: 'the request was aborted before it was sent' }));
    await releaseOne();
    await releaseOne();
    expect((await first).isOk()).toBe(true);
    expect((await third).isOk()).toBe(true);
    expect(held).toHaveLength(0);
  });

  it('refuses a limit that is not a positive integer; Infinity is no limit', () => {
    const { port } = heldPort();
    expect(() => limitConcurrency(port, 0)).toThrow(RangeError);
    expect(limitConcurrency(port, Number.POSITIVE_INFINITY)).toBe(port);
  });

  it('many runs sharing one OpenAI port all finish, through at most its limit of connections', async () => {
    let inFlight = 0;
    let most = 0;
    const server = await startOpenAiServer({
      script: (req) => {
        inFlight++;
        most = Math.max(most, inFlight);
        const answered = req.messages.some((m) => m.role === 'tool');
        // Counted out just before its reply (same delay, timer set first). 200 ms, so that with no
        // limit the 20 first requests all arrive while the first is still held, even under load.
        setTimeout(() => inFlight--, 200);
        return answered
          ? { content: 'done', delayMs: 200 }
          : { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }], delayMs: 200 };
      },
    });
    try {
      const llm = createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL: server.baseURL, maxConcurrentRequests: 3 });
      const agent = createAgent({ name: 'a', tools: [terminate] });
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => run(agent, `task ${i}`, { llm })));
      expect(outcomes.every((o) => o.status === 'finished')).toBe(true);
      expect(server.hits).toBe(20);
      expect(most).toBeLessThanOrEqual(3);
    } finally {
      await server.close();
    }
  });
});

describe('admission of runs started at once', () => {
  it('starts them in slices, one turn of the event loop each, so other work gets its turn between', async () => {
    const agent = createAgent({ name: 'a', tools: [terminate] });
    const llm = scriptedLlm(
      Array.from({ length: 300 }, () => ({ toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] })),
    );
    let started = 0;
    const emitter = createRunEmitter();
    emitter.on('event', (item) => {
      if (item.event.type === 'started') started++;
    });
    const runs = Array.from({ length: 300 }, (_, i) => run(agent, `task ${i}`, { llm, emitter }));
    const startedBeforeOtherWork = await new Promise<number>((resolve) => setImmediate(() => resolve(started)));
    const outcomes = await Promise.all(runs);
    expect(outcomes.every((o) => o.status === 'finished')).toBe(true);
    expect(startedBeforeOtherWork).toBeGreaterThan(0);
    expect(startedBeforeOtherWork).toBeLessThan(300);
    expect(started).toBe(300);
  });
});
