// A call's time limit counts the tool's work, not a person's answer: it stops while the tool's
// `scope.elicit` waits on the host's `onElicitation`, and while the host approves its `scope.sample`
// (the model's completion after it is work, and counts). The run's cancel still stops the call.
// Fake timers: the minutes a person takes pass without the test waiting for them.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type LlmPort, portComplete } from '../src/llm/llm.js';
import { errAsync } from '../src/result.js';
import { linkAbort } from '../src/shell/abort.js';
import type { RunScope, ToolScope } from '../src/shell/scope.js';
import { type CallToolEffect, executeTool } from '../src/shell/toolExecution.js';
import type { ElicitationResult } from '../src/shell/toolRequests.js';
import { scriptedLlm } from '../src/testing/index.js';
import { defineTool, type Tool, type ToolReturn } from '../src/tools/defineTool.js';

afterEach(() => {
  vi.useRealTimers();
});

const LIMIT_MS = 50;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const runScope = (overrides: Partial<RunScope> = {}): RunScope => ({
  runId: 'run-1',
  signal: new AbortController().signal,
  llm: { model: 'none', complete: () => errAsync({ kind: 'config', message: 'no model here' }) },
  resource: async (_key, open) => open(),
  emit: () => {},
  changeTools: async () => {},
  ...overrides,
});

/** The call of `tool` as the kernel makes it: with the tool's time limit. */
const callOf = (tool: Tool): CallToolEffect => ({
  type: 'callTool',
  id: 'running-1-0',
  call: { id: 'call_1', name: tool.spec.name, arguments: '{}' },
  args: {},
  parallelSafe: false,
  timeoutMs: LIMIT_MS,
});

const toolDoing = (body: (scope: ToolScope) => Promise<ToolReturn>): Tool =>
  defineTool({
    name: 'asks',
    description: 'asks a person',
    parameters: z.object({}),
    timeoutMs: LIMIT_MS,
    execute: (_args, scope) => body(scope),
  }) as Tool;

const region = { message: 'Which region?', schema: { type: 'object', properties: { region: { type: 'string' } } } };
const answerOf = (answer: ElicitationResult) =>
  answer.action === 'accept' ? `region ${String(answer.content.region)}` : answer.action;

describe('a call’s time limit stops while a person answers', () => {
  it('an elicitation answered long after the limit still gets to the tool', async () => {
    vi.useFakeTimers();
    const asked = deferred();
    const answer = deferred<ElicitationResult>();
    const tool = toolDoing(async (scope) => answerOf(await scope.elicit(region)));
    const running = executeTool(
      callOf(tool),
      tool,
      runScope({
        onElicitation: () => {
          asked.resolve();
          return answer.promise;
        },
      }),
    );
    await asked.promise;
    // The person takes ten times the call's limit.
    await vi.advanceTimersByTimeAsync(10 * LIMIT_MS);
    answer.resolve({ action: 'accept', content: { region: 'eu-west' } });
    expect(await running).toMatchObject({ output: 'region eu-west' });
  });

  it('the limit runs again once the person has answered', async () => {
    vi.useFakeTimers();
    const tool = toolDoing(async (scope) => {
      await scope.elicit(region);
      return new Promise<string>(() => {});
    });
    const running = executeTool(
      callOf(tool),
      tool,
      runScope({ onElicitation: () => ({ action: 'accept', content: { region: 'eu-west' } }) }),
    );
    await vi.advanceTimersByTimeAsync(LIMIT_MS);
    expect(await running).toMatchObject({
      output: `Error: asks timed out after ${LIMIT_MS} ms and was stopped.`,
      isError: true,
    });
  });

  it('the host’s sampling approval does not count; the model’s completion does', async () => {
    vi.useFakeTimers();
    const asked = deferred();
    const approval = deferred<boolean>();
    const tool = toolDoing(async (scope) => {
      const sampled = await scope.sample({
        messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
        maxTokens: 20,
      });
      return sampled.content.text;
    });
    const approved = executeTool(
      callOf(tool),
      tool,
      runScope({
        llm: scriptedLlm([{ content: 'sampled' }]),
        onSampling: () => {
          asked.resolve();
          return approval.promise;
        },
      }),
    );
    await asked.promise;
    await vi.advanceTimersByTimeAsync(10 * LIMIT_MS);
    approval.resolve(true);
    expect(await approved).toMatchObject({ output: 'sampled' });

    const silentModel: LlmPort = { model: 'silent', complete: portComplete(() => new Promise<never>(() => {})) };
    const working = executeTool(callOf(tool), tool, runScope({ llm: silentModel, onSampling: () => true }));
    await vi.advanceTimersByTimeAsync(LIMIT_MS);
    expect(await working).toMatchObject({ output: `Error: asks timed out after ${LIMIT_MS} ms and was stopped.` });
  });

  it('the run’s cancel stops a call waiting on a person at once', async () => {
    const asked = deferred();
    const controller = new AbortController();
    const tool = toolDoing(async (scope) => answerOf(await scope.elicit(region)));
    const running = executeTool(
      callOf(tool),
      tool,
      runScope({
        signal: controller.signal,
        onElicitation: () => {
          asked.resolve();
          return new Promise<never>(() => {});
        },
      }),
    );
    await asked.promise;
    controller.abort('stop');
    expect(await running).toMatchObject({ output: 'Error: asks was cancelled.', isError: true });
  });

  it('tells the call’s watchers when a wait on a person starts and ends', async () => {
    const seen: string[] = [];
    const tool = toolDoing(async (scope) => {
      const unwatch = scope.onPersonWait?.(() => {
        seen.push('waiting');
        return () => seen.push('answered');
      });
      await scope.elicit(region);
      unwatch?.();
      await scope.elicit(region);
      return 'asked twice';
    });
    const event = await executeTool(
      callOf(tool),
      tool,
      runScope({
        onElicitation: () => {
          seen.push('person asked');
          return { action: 'decline' };
        },
      }),
    );
    expect(event).toMatchObject({ output: 'asked twice' });
    expect(seen).toEqual(['waiting', 'person asked', 'answered', 'person asked']);
  });
});

describe('AbortLink.pause', () => {
  it('nested pauses hold the limit until the last one ends; each ends once', async () => {
    vi.useFakeTimers();
    const link = linkAbort(undefined, LIMIT_MS);
    const outer = link.pause();
    const inner = link.pause();
    inner();
    inner();
    await vi.advanceTimersByTimeAsync(10 * LIMIT_MS);
    expect(link.isStopped).toBe(false);
    outer();
    await vi.advanceTimersByTimeAsync(LIMIT_MS);
    expect(link.timedOut()).toBe(true);
  });

  it('counts the time before a pause: only what was left runs after it', async () => {
    vi.useFakeTimers();
    const link = linkAbort(undefined, LIMIT_MS);
    await vi.advanceTimersByTimeAsync(LIMIT_MS - 10);
    const resume = link.pause();
    await vi.advanceTimersByTimeAsync(10 * LIMIT_MS);
    resume();
    await vi.advanceTimersByTimeAsync(10);
    expect(link.timedOut()).toBe(true);
    link.dispose();
  });

  it('a pause that ends after the link was disposed does not start the limit again', async () => {
    vi.useFakeTimers();
    const link = linkAbort(undefined, LIMIT_MS);
    const resume = link.pause();
    link.dispose();
    resume();
    await vi.advanceTimersByTimeAsync(10 * LIMIT_MS);
    expect(link.isStopped).toBe(false);
  });

  it('the parent still stops a paused link', () => {
    const parent = new AbortController();
    const link = linkAbort(parent.signal, LIMIT_MS);
    link.pause();
    parent.abort('cancelled');
    expect(link.signal.reason).toBe('cancelled');
    expect(link.timedOut()).toBe(false);
    link.dispose();
  });
});
