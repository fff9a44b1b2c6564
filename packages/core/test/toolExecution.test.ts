import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { LlmRequest } from '../src/kernel/effects.js';
import type { HostAnswer } from '../src/kernel/events.js';
import type { LlmPort } from '../src/llm/llm.js';
import { portComplete } from '../src/llm/llm.js';
import { err, errAsync, ok } from '../src/result.js';
import type { RunItem } from '../src/shell/runItems.js';
import { createResourcePool, type RunScope, type ToolScope } from '../src/shell/scope.js';
import { type CallToolEffect, executeTool } from '../src/shell/toolExecution.js';
import { toolSession } from '../src/testing/toolSession.js';
import { defineTool, type Tool, type ToolReturn } from '../src/tools/defineTool.js';

afterEach(() => {
  vi.useRealTimers();
});

const refusingLlm: LlmPort = {
  model: 'none',
  complete: () => errAsync({ kind: 'config', message: 'no model here' }),
};

/** The scope of a run, as the shell gives it to executeTool; `emitted` collects what it announces. */
function runScope(overrides: Partial<RunScope> = {}) {
  const emitted: RunItem[] = [];
  const scope: RunScope = {
    runId: 'run-1',
    signal: new AbortController().signal,
    llm: refusingLlm,
    resource: async (_key, open) => open(),
    emit: (item) => void emitted.push(item),
    changeTools: async () => {},
    ...overrides,
  };
  return { scope, emitted };
}

const callOf = (name: string, args: unknown, extra: Partial<CallToolEffect> = {}): CallToolEffect => ({
  type: 'callTool',
  id: 'running-1-0',
  call: { id: 'call_1', name, arguments: JSON.stringify(args) },
  args,
  parallelSafe: false,
  ...extra,
});

/** A tool with no arguments whose body is `body`. */
const toolDoing = (name: string, body: (scope: ToolScope) => Promise<ToolReturn> | ToolReturn): Tool =>
  defineTool({ name, description: name, parameters: z.object({}), execute: (_args, scope) => body(scope) }) as Tool;

const request: LlmRequest = { messages: [{ role: 'user', content: 'hi' }], tools: [], toolChoice: 'auto' };

describe('executeTool: calls that cannot run', () => {
  it('a tool without an implementation is an error naming the tools available', async () => {
    const { scope } = runScope();
    const event = await executeTool(callOf('ghost', {}), undefined, scope, { available: ['echo', 'write'] });
    expect(event).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: "Error: the tool 'ghost' is not available. Available tools: echo, write.",
      isError: true,
    });
  });

  it('with no tools available the message says "none"', async () => {
    const { scope } = runScope();
    for (const available of [undefined, []]) {
      const event = await executeTool(callOf('ghost', {}), undefined, scope, available ? { available } : {});
      expect(event).toMatchObject({ output: "Error: the tool 'ghost' is not available. Available tools: none." });
    }
  });

  it('invalid arguments are an error listing each problem and where it is, and the tool does not run', async () => {
    let ran = false;
    const typed = defineTool({
      name: 'typed',
      description: 'Typed',
      parameters: z.object({ text: z.string(), n: z.number() }),
      execute: () => {
        ran = true;
        return 'ran';
      },
    }) as Tool;
    const { scope } = runScope();
    const event = await executeTool(callOf('typed', { text: 1, n: 'x' }), typed, scope);
    expect(event).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: [
        'Error: invalid arguments for typed:',
        '✖ Invalid input: expected string, received number',
        '  → at text',
        '✖ Invalid input: expected number, received string',
        '  → at n',
      ].join('\n'),
      isError: true,
    });
    expect(ran).toBe(false);
  });

  it('a schema that throws while parsing (a transform or refine) is an error observation, not a rejection', async () => {
    // zod lets an exception thrown in a transform or refine escape safeParse.
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'Fetch',
      parameters: z.object({ url: z.string().transform((url) => new URL(url).host) }),
      execute: ({ url }) => url,
    }) as Tool;
    const event = await executeTool(callOf('fetch_page', { url: 'not a url' }), fetchPage, runScope().scope);
    expect(event).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: expect.stringMatching(/^Error: invalid arguments for [a-z_]*:\n.*Invalid URL/),
      isError: true,
    });
  });

  it('the tool gets the arguments as its schema parsed them (defaults filled in), not the raw ones', async () => {
    const seen: unknown[] = [];
    const withDefault = defineTool({
      name: 'd',
      description: 'd',
      parameters: z.object({ n: z.number().default(3) }),
      execute: (args) => {
        seen.push(args);
        return 'ok';
      },
    }) as Tool;
    await executeTool(callOf('d', {}), withDefault, runScope().scope);
    expect(seen).toEqual([{ n: 3 }]);
  });
});

describe('executeTool: what the tool returns', () => {
  const outcomeOf = async (returned: ToolReturn) =>
    executeTool(
      callOf('t', {}),
      toolDoing('t', () => returned),
      runScope().scope,
    );

  it('a string is the output, with no error flag, usage or data', async () => {
    const event = await outcomeOf('done');
    expect(event).toEqual({ type: 'toolCompleted', effectId: 'running-1-0', output: 'done' });
    // Not even as keys left undefined: the event is saved and sent as it is.
    expect(Object.keys(event)).toEqual(['type', 'effectId', 'output']);
  });

  it('an empty output says the tool completed with no output', async () => {
    expect(await outcomeOf('')).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: 't completed with no output.',
    });
    expect(await outcomeOf({ output: '' })).toMatchObject({ output: 't completed with no output.' });
    expect(await outcomeOf(ok(''))).toMatchObject({ output: 't completed with no output.' });
  });

  it('an empty output with an image stays empty: the image is the answer', async () => {
    const image = { base64: 'AAAA', mimeType: 'image/png' as const };
    expect(await outcomeOf({ output: '', image })).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: '',
      image,
    });
  });

  it('an output with an image keeps both, returned plain or as ok()', async () => {
    const image = { base64: 'AAAA', mimeType: 'image/png' as const };
    const expected = { type: 'toolCompleted', effectId: 'running-1-0', output: 'page shown', image };
    expect(await outcomeOf({ output: 'page shown', image })).toEqual(expected);
    expect(await outcomeOf(ok({ output: 'page shown', image }))).toEqual(expected);
  });

  it('a brief travels with the output (plain or as ok()), for the history to shrink it to later', async () => {
    const expected = { type: 'toolCompleted', effectId: 'running-1-0', output: 'clicked\nstate', brief: 'clicked' };
    expect(await outcomeOf({ output: 'clicked\nstate', brief: 'clicked' })).toEqual(expected);
    expect(await outcomeOf(ok({ output: 'clicked\nstate', brief: 'clicked' }))).toEqual(expected);
    expect(await outcomeOf({ output: 'clicked\nstate', brief: '' })).toEqual({ ...expected, brief: '' });
  });

  it('an output marked isError is an error observation that keeps its brief and image', async () => {
    const image = { base64: 'AAAA', mimeType: 'image/png' as const };
    expect(
      await outcomeOf({ output: 'ref e5 is stale\n\nstate', brief: 'ref e5 is stale', isError: true, image }),
    ).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: 'Error: ref e5 is stale\n\nstate',
      isError: true,
      image,
      brief: 'ref e5 is stale',
    });
  });

  it("another library's promise (any thenable) is awaited like a native one", async () => {
    // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise is what is tested
    const thenable = { then: (resolve: (value: ToolReturn) => void) => resolve('from a thenable') };
    expect(await outcomeOf(thenable as unknown as ToolReturn)).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: 'from a thenable',
    });
  });

  it('ok() with a string is that string', async () => {
    expect(await outcomeOf(ok('fine'))).toEqual({ type: 'toolCompleted', effectId: 'running-1-0', output: 'fine' });
  });

  it('err() is an error observation, from an Error by its message or from a string as it is', async () => {
    expect(await outcomeOf(err(new Error('not allowed here')))).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: 'Error: not allowed here',
      isError: true,
    });
    expect(await outcomeOf(err('quota used up'))).toMatchObject({ output: 'Error: quota used up', isError: true });
  });

  it('a tool that throws is an error naming it, with the message or the thrown value', async () => {
    const { scope } = runScope();
    const boom = toolDoing('boom', () => {
      throw new Error('disk on fire');
    });
    expect(await executeTool(callOf('boom', {}), boom, scope)).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: 'Error: boom failed: disk on fire',
      isError: true,
    });
    const rejects = toolDoing('rejects', () => Promise.reject('a plain string'));
    expect(await executeTool(callOf('rejects', {}), rejects, scope)).toMatchObject({
      output: 'Error: rejects failed: a plain string',
      isError: true,
    });
  });

  it('a suspension pauses the call with its progress and what it waits for', async () => {
    const waiting = [
      {
        kind: 'approval' as const,
        effectId: 'approval-1-0',
        call: { id: 'c', name: 'deploy', arguments: '{}' },
        args: {},
      },
    ];
    const event = await outcomeOf({ suspend: { progress: { step: 2 }, waiting } });
    expect(event).toEqual({ type: 'toolSuspended', effectId: 'running-1-0', progress: { step: 2 }, waiting });
  });
});

describe('executeTool: time limits and cancelling', () => {
  const hang = toolDoing('hang', () => new Promise<string>(() => {}));

  it('stops a call at the effect’s time limit, with an error naming it', async () => {
    const event = await executeTool(callOf('hang', {}, { timeoutMs: 20 }), hang, runScope().scope, {
      toolTimeoutMs: 60_000,
    });
    expect(event).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: 'Error: hang timed out after 20 ms and was stopped.',
      isError: true,
    });
  });

  it('uses the run’s time limit for a call without its own', async () => {
    const event = await executeTool(callOf('hang', {}), hang, runScope().scope, { toolTimeoutMs: 20 });
    expect(event).toMatchObject({ output: 'Error: hang timed out after 20 ms and was stopped.', isError: true });
  });

  it('gives a call two minutes when neither the call nor the run sets a limit', async () => {
    vi.useFakeTimers();
    let settled = false;
    const running = executeTool(callOf('hang', {}), hang, runScope().scope).then((event) => {
      settled = true;
      return event;
    });
    await vi.advanceTimersByTimeAsync(119_999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await running).toMatchObject({ output: 'Error: hang timed out after 120000 ms and was stopped.' });
  });

  it('a tool that rejects from its abort listener at its time limit is still reported as timed out', async () => {
    const stubborn = toolDoing(
      'stubborn',
      ({ signal }) =>
        new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    );
    const event = await executeTool(callOf('stubborn', {}, { timeoutMs: 10 }), stubborn, runScope().scope);
    expect(event).toMatchObject({ output: 'Error: stubborn timed out after 10 ms and was stopped.', isError: true });
  });

  it('a call running when the run is cancelled is reported as cancelled', async () => {
    const controller = new AbortController();
    const waits = toolDoing('waits', () => {
      controller.abort('stop');
      return new Promise<string>(() => {});
    });
    const event = await executeTool(callOf('waits', {}), waits, runScope({ signal: controller.signal }).scope);
    expect(event).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: 'Error: waits was cancelled.',
      isError: true,
    });
  });

  it('a tool that throws once the run is cancelled is reported as cancelled, not as failed', async () => {
    const controller = new AbortController();
    const throwsOnAbort = toolDoing('throws', async ({ signal }) => {
      controller.abort('stop');
      throw new Error(`gave up: ${String(signal.reason)}`);
    });
    const event = await executeTool(callOf('throws', {}), throwsOnAbort, runScope({ signal: controller.signal }).scope);
    expect(event).toMatchObject({ output: 'Error: throws was cancelled.', isError: true });
  });

  it('the tool’s signal carries the run’s reason when the run is cancelled', async () => {
    const controller = new AbortController();
    let reason: unknown;
    const listens = toolDoing(
      'listens',
      ({ signal }) =>
        new Promise<string>((resolve) => {
          signal.addEventListener('abort', () => {
            reason = signal.reason;
            resolve('heard');
          });
          controller.abort('the host stopped it');
        }),
    );
    await executeTool(callOf('listens', {}), listens, runScope({ signal: controller.signal }).scope);
    expect(reason).toBe('the host stopped it');
  });

  it('once a call is over it lets go of the run’s signal, and its time limit no longer fires', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const quick = toolDoing('quick', ({ signal }) => {
      toolSignal = signal;
      return 'fast';
    });
    const { scope } = runScope({ signal: controller.signal });
    for (let i = 0; i < 3; i++) {
      const event = await executeTool(callOf('quick', {}, { timeoutMs: 3_600_000 }), quick, scope);
      expect(event).toMatchObject({ output: 'fast' });
    }
    // No listener piles up on a long run's signal (one serves all its calls); that no hour-long
    // timer keeps the process alive is checked in a real process (deadline.test.ts).
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort('later');
    await vi.advanceTimersByTimeAsync(3_600_001);
    expect(toolSignal?.aborted).toBe(false);
  });

  it('a call that fails or times out lets go of the run’s signal too', async () => {
    const controller = new AbortController();
    const { scope } = runScope({ signal: controller.signal });
    await executeTool(
      callOf('boom', {}),
      toolDoing('boom', () => {
        throw new Error('x');
      }),
      scope,
    );
    await executeTool(callOf('hang', {}, { timeoutMs: 5 }), hang, scope);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await executeTool(callOf('hang', {}, { timeoutMs: 5 }), hang, scope);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
  });
});

describe('executeTool: the scope a tool gets', () => {
  it('carries the run’s id, workspace and callbacks, and the call’s ids', async () => {
    const onHuman = async () => 'yes';
    const onApproval = async () => true;
    let seen: ToolScope | undefined;
    const look = toolDoing('look', (scope) => {
      seen = scope;
      return 'ok';
    });
    const { scope } = runScope({ workspace: '/tmp/ws', onHuman, onApproval });
    await executeTool(callOf('look', {}), look, scope, { data: { kept: 1 } });
    expect(seen).toMatchObject({
      runId: 'run-1',
      workspace: '/tmp/ws',
      callId: 'call_1',
      effectId: 'running-1-0',
      data: { kept: 1 },
    });
    expect(seen?.onHuman).toBe(onHuman);
    expect(seen?.onApproval).toBe(onApproval);
    expect(seen && 'progress' in seen).toBe(false);
    expect(seen && 'answer' in seen).toBe(false);
  });

  it('keeps its live parts when a tool copies it: the copy’s signal and model are the call’s', async () => {
    const parent = new AbortController();
    let copy: ToolScope | undefined;
    let llmRead: { first: LlmPort; second: LlmPort } | undefined;
    const look = toolDoing('look', async (scope) => {
      llmRead = { first: scope.llm, second: scope.llm };
      // A tool handing a changed scope on (to a child tool) spreads it.
      const copied = { ...scope, runId: 'child' };
      copy = copied;
      await new Promise((resolve) => copied.signal.addEventListener('abort', resolve));
      return 'ok';
    });
    const done = executeTool(callOf('look', {}), look, runScope({ signal: parent.signal }).scope);
    expect(llmRead?.first).toBe(llmRead?.second);
    expect(copy?.llm).toBe(llmRead?.first);
    expect(copy?.runId).toBe('child');
    expect(typeof copy?.emit).toBe('function');
    expect(copy?.signal.aborted).toBe(false);
    parent.abort('stop');
    expect(copy?.signal.aborted).toBe(true);
    expect(await done).toMatchObject({ output: 'Error: look was cancelled.', isError: true });
  });

  it('leaves out what the run does not have', async () => {
    let seen: ToolScope | undefined;
    const look = toolDoing('look', (scope) => {
      seen = scope;
      return 'ok';
    });
    await executeTool(callOf('look', {}), look, runScope().scope);
    expect(
      seen &&
        Object.keys(seen).filter((k) => ['workspace', 'onHuman', 'onApproval', 'sandbox', 'takesDeltas'].includes(k)),
    ).toEqual([]);
    expect(seen?.data).toBeUndefined();
  });

  it('lets a tool save progress where nobody records it (a call made outside a run)', async () => {
    const saves = toolDoing('saves', (scope) => {
      scope.saveProgress({ page: 2 });
      return 'saved';
    });
    expect(await executeTool(callOf('saves', {}), saves, runScope().scope)).toMatchObject({ output: 'saved' });
  });

  it('hands a resumed call its progress and the person’s answer', async () => {
    let seen: ToolScope | undefined;
    const look = toolDoing('look', (scope) => {
      seen = scope;
      return 'ok';
    });
    const answer: HostAnswer = { type: 'approvalGiven', effectId: 'approval-1-0' };
    await executeTool(callOf('look', {}, { progress: { step: 3 }, answer }), look, runScope().scope);
    expect(seen?.progress).toEqual({ step: 3 });
    expect(seen?.answer).toEqual(answer);
  });

  it('a progress of zero is still progress', async () => {
    let seen: ToolScope | undefined;
    await executeTool(
      callOf('look', {}, { progress: 0 }),
      toolDoing('look', (scope) => {
        seen = scope;
        return 'ok';
      }),
      runScope().scope,
    );
    expect(seen && 'progress' in seen).toBe(true);
    expect(seen?.progress).toBe(0);
  });

  it('items the tool emits reach the run tagged with the call, outermost first', async () => {
    const { scope, emitted } = runScope();
    const child = toolDoing('child', (s) => {
      s.emit({ type: 'observation', observation: { kind: 'memoryTrimmed', dropped: 1, shrunk: 0 } });
      s.emit({
        type: 'observation',
        observation: { kind: 'memoryTrimmed', dropped: 2, shrunk: 0 },
        origin: [{ tool: 'grandchild', effectId: 'running-2-0' }],
      });
      return 'ok';
    });
    await executeTool(callOf('child', {}), child, scope);
    expect(emitted).toEqual([
      {
        type: 'observation',
        observation: { kind: 'memoryTrimmed', dropped: 1, shrunk: 0 },
        origin: [{ tool: 'child', effectId: 'running-1-0' }],
      },
      {
        type: 'observation',
        observation: { kind: 'memoryTrimmed', dropped: 2, shrunk: 0 },
        origin: [
          { tool: 'child', effectId: 'running-1-0' },
          { tool: 'grandchild', effectId: 'running-2-0' },
        ],
      },
    ]);
  });

  it('resources and tool changes go to the run', async () => {
    const opened: string[] = [];
    const changes: unknown[] = [];
    const { scope } = runScope({
      resource: async (key, open) => {
        opened.push(key);
        return open();
      },
      changeTools: async (change) => void changes.push(change),
    });
    const uses = toolDoing('uses', async (s) => {
      const value = await s.resource('k', () => 'opened');
      await s.changeTools({ remove: ['uses'] });
      return value;
    });
    expect(await executeTool(callOf('uses', {}), uses, scope)).toMatchObject({ output: 'opened' });
    expect(opened).toEqual(['k']);
    expect(changes).toEqual([{ remove: ['uses'] }]);
  });

  it('data the tool sets comes back with its result, even a falsy value', async () => {
    for (const value of [{ undo: ['a'] }, 0, null, '']) {
      const keeps = toolDoing('keeps', (s) => {
        s.setData(value);
        return 'ok';
      });
      const event = await executeTool(callOf('keeps', {}), keeps, runScope().scope);
      expect(event).toEqual({ type: 'toolCompleted', effectId: 'running-1-0', output: 'ok', data: value });
    }
  });

  it('data set before the tool fails comes back with the error', async () => {
    const fails = toolDoing('fails', (s) => {
      s.setData('half done');
      throw new Error('then broke');
    });
    expect(await executeTool(callOf('fails', {}), fails, runScope().scope)).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: 'Error: fails failed: then broke',
      isError: true,
      data: 'half done',
    });
  });
});

describe('executeTool: model use of the tool’s own', () => {
  /** A model answering with these usages in turn (undefined: a reply without usage; 'fail': an error). */
  function meteredModel(replies: ({ inputTokens: number; outputTokens: number } | undefined | 'fail')[]) {
    const calls: { request: LlmRequest; signal?: AbortSignal }[] = [];
    const llm: LlmPort = {
      model: 'the-run-model',
      complete: portComplete(async (req, options) => {
        calls.push({ request: req, ...(options?.signal ? { signal: options.signal } : {}) });
        const reply = replies[calls.length - 1];
        if (reply === 'fail') return err({ kind: 'server', message: 'down' });
        return ok({ content: 'summary', toolCalls: [], ...(reply ? { usage: reply } : {}) });
      }),
    };
    return { llm, calls };
  }

  it('counts every call to the run’s model and adds up its tokens', async () => {
    const { llm, calls } = meteredModel([
      { inputTokens: 3, outputTokens: 4 },
      undefined,
      'fail',
      { inputTokens: 5, outputTokens: 6 },
    ]);
    let model: string | undefined;
    const summarise = toolDoing('summarise', async (s) => {
      model = s.llm.model;
      for (let i = 0; i < 4; i++) await s.llm.complete(request, { signal: s.signal });
      return 'summarised';
    });
    const event = await executeTool(callOf('summarise', {}), summarise, runScope({ llm }).scope);
    expect(event).toEqual({
      type: 'toolCompleted',
      effectId: 'running-1-0',
      output: 'summarised',
      usage: { inputTokens: 8, outputTokens: 10, llmCalls: 4 },
    });
    expect(model).toBe('the-run-model');
    expect(calls.map((c) => c.request)).toEqual([request, request, request, request]);
    expect(calls.every((c) => c.signal instanceof AbortSignal)).toBe(true);
  });

  it('reports usage with any one part spent: calls without tokens, or tokens without calls', async () => {
    const { llm } = meteredModel([undefined]);
    const callsOnly = toolDoing('calls_only', async (s) => {
      await s.llm.complete(request);
      return 'asked';
    });
    expect(await executeTool(callOf('calls_only', {}), callsOnly, runScope({ llm }).scope)).toMatchObject({
      usage: { inputTokens: 0, outputTokens: 0, llmCalls: 1 },
    });
    for (const spent of [
      { inputTokens: 7, outputTokens: 0, llmCalls: 0 },
      { inputTokens: 0, outputTokens: 9, llmCalls: 0 },
    ]) {
      const reports = toolDoing('reports', (s) => {
        s.addUsage(spent);
        return 'reported';
      });
      expect(await executeTool(callOf('reports', {}), reports, runScope().scope)).toMatchObject({ usage: spent });
    }
  });

  it('passes the model’s answer back to the tool unchanged', async () => {
    const { llm } = meteredModel([{ inputTokens: 1, outputTokens: 1 }, 'fail']);
    const replies: unknown[] = [];
    const asks = toolDoing('asks', async (s) => {
      replies.push(await s.llm.complete(request));
      replies.push(await s.llm.complete(request));
      return 'ok';
    });
    await executeTool(callOf('asks', {}), asks, runScope({ llm }).scope);
    expect(replies).toEqual([
      ok({ content: 'summary', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } }),
      err({ kind: 'server', message: 'down' }),
    ]);
  });

  it('adds usage the tool reports itself to what its model calls used', async () => {
    const { llm } = meteredModel([{ inputTokens: 10, outputTokens: 1 }]);
    const child = toolDoing('child', async (s) => {
      await s.llm.complete(request);
      s.addUsage({ inputTokens: 100, outputTokens: 20, llmCalls: 2 });
      s.addUsage({ inputTokens: 1, outputTokens: 2, llmCalls: 1 });
      return 'ok';
    });
    const event = await executeTool(callOf('child', {}), child, runScope({ llm }).scope);
    expect(event).toMatchObject({ usage: { inputTokens: 111, outputTokens: 23, llmCalls: 4 } });
  });

  it('reports usage with progress as it is spent, and each call only once', async () => {
    const { llm } = meteredModel([
      { inputTokens: 1, outputTokens: 1 },
      { inputTokens: 2, outputTokens: 2 },
    ]);
    const progress: unknown[][] = [];
    const long = toolDoing('long', async (s) => {
      await s.llm.complete(request);
      s.saveProgress('first');
      s.saveProgress('nothing spent since');
      await s.llm.complete(request);
      s.saveProgress('second');
      return 'done';
    });
    const event = await executeTool(callOf('long', {}), long, runScope({ llm }).scope, {
      saveProgress: (...args) => void progress.push(args),
    });
    expect(progress).toEqual([
      ['first', { inputTokens: 1, outputTokens: 1, llmCalls: 1 }],
      ['nothing spent since', undefined],
      ['second', { inputTokens: 2, outputTokens: 2, llmCalls: 1 }],
    ]);
    expect(event).toEqual({ type: 'toolCompleted', effectId: 'running-1-0', output: 'done' });
  });

  it('the result carries only what was spent after the last progress report', async () => {
    const { llm } = meteredModel([
      { inputTokens: 1, outputTokens: 1 },
      { inputTokens: 5, outputTokens: 7 },
    ]);
    const long = toolDoing('long', async (s) => {
      await s.llm.complete(request);
      s.saveProgress('halfway');
      await s.llm.complete(request);
      return 'done';
    });
    const event = await executeTool(callOf('long', {}), long, runScope({ llm }).scope, { saveProgress: () => {} });
    expect(event).toMatchObject({ usage: { inputTokens: 5, outputTokens: 7, llmCalls: 1 } });
  });

  it('a suspended call reports what it spent before it paused', async () => {
    const { llm } = meteredModel([{ inputTokens: 4, outputTokens: 2 }]);
    const pauses = toolDoing('pauses', async (s) => {
      await s.llm.complete(request);
      return { suspend: { progress: 'p', waiting: [] } };
    });
    expect(await executeTool(callOf('pauses', {}), pauses, runScope({ llm }).scope)).toEqual({
      type: 'toolSuspended',
      effectId: 'running-1-0',
      progress: 'p',
      waiting: [],
      usage: { inputTokens: 4, outputTokens: 2, llmCalls: 1 },
    });
  });

  it('a call that timed out still reports the model calls it made', async () => {
    const { llm } = meteredModel([{ inputTokens: 9, outputTokens: 9 }]);
    const slow = toolDoing('slow', async (s) => {
      await s.llm.complete(request);
      return new Promise<string>(() => {});
    });
    const event = await executeTool(callOf('slow', {}, { timeoutMs: 10 }), slow, runScope({ llm }).scope);
    expect(event).toMatchObject({
      output: 'Error: slow timed out after 10 ms and was stopped.',
      usage: { inputTokens: 9, outputTokens: 9, llmCalls: 1 },
    });
  });
});

describe('createResourcePool', () => {
  it('opens a resource once per key, even for uses that overlap', async () => {
    const pool = createResourcePool();
    let opened = 0;
    const open = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return { n: ++opened };
    };
    const [a, b] = await Promise.all([pool.get('browser', open), pool.get('browser', open)]);
    expect(a).toBe(b);
    expect(await pool.get('browser', open)).toBe(a);
    expect(await pool.get('shell', open)).toEqual({ n: 2 });
    expect(opened).toBe(2);
  });

  it('does not keep a resource that failed to open: the next use tries again', async () => {
    const pool = createResourcePool();
    let attempts = 0;
    const open = () => {
      if (++attempts === 1) throw new Error('port in use');
      return 'opened';
    };
    await expect(pool.get('k', open)).rejects.toThrow('port in use');
    expect(await pool.get('k', open)).toBe('opened');
    expect(attempts).toBe(2);
  });

  it('closes everything it opened, newest first, each with its value, and waits for each; a failing close does not stop the others', async () => {
    const pool = createResourcePool();
    const closed: string[] = [];
    await pool.get(
      'first',
      () => 'one',
      (value) => void closed.push(`close ${value}`),
    );
    await pool.get(
      'second',
      () => 'two',
      (value) => {
        closed.push(`close ${value}`);
        throw new Error('already gone');
      },
    );
    await pool.get(
      'third',
      () => 'three',
      async (value) => {
        closed.push(`close ${value}`);
        await new Promise((resolve) => setImmediate(resolve));
        closed.push(`closed ${value}`);
      },
    );
    await pool.get('no close', () => 'four');
    await expect(pool.close()).resolves.toBeUndefined();
    expect(closed).toEqual(['close three', 'close two', 'close one', 'closed three']);
    // Closed means forgotten: a later use opens anew, a second close closes nothing twice.
    let reopened = 0;
    await pool.get('first', () => ++reopened);
    await pool.close();
    expect(reopened).toBe(1);
    expect(closed).toHaveLength(4);
  });
});

describe('toolSession', () => {
  it('calls a tool as a run would and keeps its data between calls', async () => {
    const counter = defineTool({
      name: 'counter',
      description: 'Counts its calls',
      parameters: z.object({ by: z.number() }),
      execute: ({ by }, scope) => {
        const next = ((scope.data as number | undefined) ?? 0) + by;
        scope.setData(next);
        return String(next);
      },
    });
    const session = toolSession(counter as Tool);
    expect(await session.call({ by: 2 })).toEqual({ output: '2', isError: false });
    expect(await session.call({ by: 3 })).toEqual({ output: '5', isError: false });
    expect(session.data).toBe(5);
    expect(await session.call({ by: 'x' })).toMatchObject({ isError: true });
    expect(session.data).toBe(5);
    await session.close();
  });

  it('a signal given to one call cancels that call only', async () => {
    const hang = toolDoing('hang', () => new Promise<string>(() => {}));
    const session = toolSession(hang);
    const controller = new AbortController();
    const pending = session.call({}, { signal: controller.signal });
    controller.abort();
    expect(await pending).toEqual({ output: 'Error: hang was cancelled.', isError: true });
    await session.close();
  });
});
