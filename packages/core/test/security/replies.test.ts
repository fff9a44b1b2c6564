import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/kernel/agent.js';
import type { LlmError, LlmResponse } from '../../src/llm/llm.js';
import { parseToolCalls } from '../../src/llm/promptTools.js';
import type { Result } from '../../src/result.js';
import { err, ok } from '../../src/result.js';
import { run } from '../../src/shell/run.js';
import { scriptedLlm } from '../../src/testing/scriptedLlm.js';
import { defineTool } from '../../src/tools/defineTool.js';
import { useOpenAiServers } from '../servers.js';

// What a hostile (or broken) model and model server can send: replies that stall the parser,
// bodies that never finish, streams that stop or break, arguments too large to keep.

const { serve, llmFor } = useOpenAiServers({ maxRetries: 0 });

const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [], toolChoice: 'auto' as const };

/** A backstop only a hang reaches, never a budget a slow machine could miss. */
const HUNG_MS = 100_000;

/** The reply, or `hung` when nothing came back within `ms` (the failure before the fixes). */
async function within(
  ms: number,
  reply: PromiseLike<Result<LlmResponse, LlmError>>,
): Promise<Result<LlmResponse, LlmError> | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), ms);
  });
  try {
    return await Promise.race([reply, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Far above what linear parsing of these inputs takes on any machine, far below what the old
 * backtracking pattern took on them (20 s at 5 KB and cubic: minutes at the 10-20 KB used here).
 */
const ONLY_A_BLOWUP_MS = 20_000;

function timed<T>(work: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

describe('prompt-mode tool calls are parsed in linear time', () => {
  // The old backtracking pattern took 20 s and more on each of these at 5 KB (cubic in the length).
  const cubic: Record<string, string> = {
    'an opening then whitespace': `<tool_call>${' '.repeat(10_000)}x`,
    'mixed whitespace after an opening': `<tool_call>${' \n\t\r'.repeat(2_500)}</tool_cal`,
  };
  for (const [name, reply] of Object.entries(cubic)) {
    it(`a 10 KB reply with ${name}`, () => {
      expect(reply.length).toBeGreaterThanOrEqual(10_000);
      const { value, ms } = timed(() => parseToolCalls(reply));
      expect(ms).toBeLessThan(ONLY_A_BLOWUP_MS);
      expect(value).toEqual({ content: reply.trim(), toolCalls: [] });
    });
  }

  it('other hostile shapes stay fast too: openings, braces, fences, unclosed names', () => {
    const shapes = [
      `<tool_call>${' '.repeat(20)}`.repeat(1_000),
      '<tool_call>'.repeat(1_840),
      `<tool_call>\`\`\`json${' '.repeat(20_000)}x</tool_call>`,
      `<tool_call>${'{'.repeat(20_000)}</tool_call>`,
      `<tool_call>${'"name" :  "'.repeat(2_000)}</tool_call>`,
      `<tool_call>"name"${' '.repeat(20_000)}</tool_call>`,
    ];
    for (const reply of shapes) expect(timed(() => parseToolCalls(reply)).ms).toBeLessThan(ONLY_A_BLOWUP_MS);
  });

  it('and a 1 MB one, with no blow-up', () => {
    const reply = `${`<tool_call>${' '.repeat(1_000)}`.repeat(1_000)}<tool_call>{"name": "add", "arguments": {}}</tool_call>`;
    const { value, ms } = timed(() => parseToolCalls(reply));
    expect(ms).toBeLessThan(ONLY_A_BLOWUP_MS);
    // The first opening pairs with the only closing: one call, not valid JSON, named by the fallback.
    expect(value.toolCalls).toHaveLength(1);
    expect(value.toolCalls[0]?.name).toBe('add');
    expect(value.content).toBe('');
  });

  it('parses what it parsed before', () => {
    expect(
      parseToolCalls(
        'I will add.\n<tool_call>{"name": "add", "arguments": {"a": 2, "b": 5}}</tool_call>\n' +
          'and\n<tool_call>\n```json\n{"name": "echo", "arguments": "{\\"text\\": \\"hi\\"}"}\n```\n</tool_call> done',
      ),
    ).toEqual({
      content: 'I will add.\n\nand\n done',
      toolCalls: [
        { id: 'call_0', name: 'add', arguments: '{"a":2,"b":5}' },
        { id: 'call_1', name: 'echo', arguments: '{"text": "hi"}' },
      ],
    });
    // Not JSON: the raw text is the arguments, the name found by a looser reading.
    expect(parseToolCalls('<tool_call>{"name": "add", "arguments": {"a": 1,</tool_call>').toolCalls).toEqual([
      { id: 'call_0', name: 'add', arguments: '{"name": "add", "arguments": {"a": 1,' },
    ]);
    expect(parseToolCalls('<tool_call>nonsense</tool_call>').toolCalls[0]?.name).toBe('unknown');
    expect(parseToolCalls('<tool_call>{"name":""}</tool_call>').toolCalls[0]).toEqual({
      id: 'call_0',
      name: '',
      arguments: '{}',
    });
    // An unclosed block is text; a second opening inside a block belongs to its body.
    expect(parseToolCalls('text <tool_call>{"name": "add"}')).toEqual({
      content: 'text <tool_call>{"name": "add"}',
      toolCalls: [],
    });
    expect(parseToolCalls('<tool_call>x <tool_call>{}</tool_call>').toolCalls[0]?.arguments).toBe('x <tool_call>{}');
    expect(parseToolCalls('<tool_call>```json```</tool_call>').toolCalls[0]?.arguments).toBe('');
    expect(parseToolCalls('<tool_call>```{"name": "a"}```</tool_call>').toolCalls[0]).toMatchObject({ name: 'a' });
  });

  it('a whole prompt-mode run with a hostile 20 KB reply goes on', async () => {
    // Cubic backtracking on 20 KB would take twenty minutes: far past the test's time-out.
    const hostile = `<tool_call>${' '.repeat(20_000)}`;
    const server = await serve([{ content: hostile }]);
    const result = await run(createAgent({ name: 'calc', tools: [add] }), 'hi', {
      llm: llmFor(server, { toolMode: 'prompt' }),
    });
    expect(result).toMatchObject({ finishReason: 'answered', answer: hostile.trim() });
  });
});

describe('one deadline per model request, body included', () => {
  it('a body trickled after the headers times out at the deadline', async () => {
    // 1,000 pieces 600 ms apart: the whole body takes 10 minutes; the deadline is 500 ms.
    const server = await serve([{ content: 'x'.repeat(16_000), trickleMs: 600 }]);
    const result = await within(HUNG_MS, llmFor(server, { timeoutMs: 500 }).complete(request));
    expect(result).toMatchObject(
      err({ kind: 'timeout', message: 'no complete reply within 500 ms (the configured timeout)' }),
    );
  });

  it('so does a streamed reply that keeps trickling', async () => {
    // Ten minutes of pieces, each well within the idle limit; the deadline is 1 s.
    const server = await serve([{ content: 'x'.repeat(16_000), trickleMs: 600 }]);
    const result = await within(HUNG_MS, llmFor(server, { timeoutMs: 1_000, stream: true }).complete(request));
    expect(result).toMatchObject(err({ kind: 'timeout' }));
  });

  it('the run fails with the reason, not forever', async () => {
    const server = await serve([{ content: 'x'.repeat(2_000), trickleMs: 50 }]);
    const result = await run(createAgent({ name: 'calc' }), 'hi', { llm: llmFor(server, { timeoutMs: 500 }) });
    expect(result).toMatchObject({ status: 'failed', finishReason: 'error' });
    expect(result.error?.message).toBe(
      'the model request failed: timeout: no complete reply within 500 ms (the configured timeout)',
    );
  });

  it('a stream that goes quiet ends at the idle timeout', async () => {
    const server = await serve([{ content: 'x'.repeat(400), stallAfter: 3 }]);
    const llm = llmFor(server, { timeoutMs: 600_000, idleTimeoutMs: 300, stream: true });
    const result = await within(HUNG_MS, llm.complete(request));
    expect(result).toMatchObject(err({ kind: 'timeout', message: 'the reply stream went quiet for 300 ms' }));
  });

  it('a stream that never starts ends at the deadline', async () => {
    const server = await serve([{ content: 'late', stallAfter: 0 }]);
    const result = await within(HUNG_MS, llmFor(server, { timeoutMs: 500, stream: true }).complete(request));
    expect(result).toMatchObject(err({ kind: 'timeout' }));
  });

  it("the caller's cancel is still 'aborted'", async () => {
    // A body of 10 minutes: only the cancel can end it before the backstop.
    const server = await serve([{ content: 'x'.repeat(16_000), trickleMs: 600 }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await within(
      HUNG_MS,
      llmFor(server, { timeoutMs: 60_000 }).complete(request, { signal: controller.signal }),
    );
    expect(result).toMatchObject(err({ kind: 'aborted' }));
  });
});

describe('a reply cut mid-way is a network error, retried', () => {
  it('a stream cut mid-way is retried, and the retry answers', async () => {
    const server = await serve([{ content: 'x'.repeat(400), cutAfter: 4 }, { content: 'whole' }]);
    const result = await within(HUNG_MS, llmFor(server, { stream: true, maxRetries: 2 }).complete(request));
    expect(result).toMatchObject(ok({ content: 'whole' }));
    expect(server.hits).toBe(2);
  });

  it('a body cut mid-way too', async () => {
    const server = await serve([{ content: 'x'.repeat(400), cutAfter: 4 }, { content: 'whole' }]);
    const result = await within(HUNG_MS, llmFor(server, { maxRetries: 2 }).complete(request));
    expect(result).toMatchObject(ok({ content: 'whole' }));
    expect(server.hits).toBe(2);
  });

  it("once the retries are spent it is reported as 'network'", async () => {
    const cut = { content: 'x'.repeat(400), cutAfter: 4 };
    const server = await serve([cut, cut]);
    const result = await within(HUNG_MS, llmFor(server, { stream: true, maxRetries: 1 }).complete(request));
    expect(result).toMatchObject(
      err({ kind: 'network', message: expect.stringMatching(/^the connection broke during the reply: terminated/) }),
    );
    expect(server.hits).toBe(2);
  });
});

describe('tool-call arguments are capped', () => {
  const huge = `{"a": 1, "b": 2, "pad": "${'x'.repeat(5_000_000)}"}`;

  it('5 MB of arguments: the model is told, the run goes on, the state stays small', async () => {
    const llm = scriptedLlm([
      { content: 'here goes', toolCalls: [{ name: 'add', arguments: huge, id: 'big' }] },
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { content: 'done' },
    ]);
    const result = await run(createAgent({ name: 'calc', tools: [add] }), 'add', { llm });
    expect(result).toMatchObject({ finishReason: 'answered', answer: 'done' });
    const seen = llm.requests[1]?.messages ?? [];
    const assistant = seen.find((m) => m.role === 'assistant');
    // Kept as a call that pairs with its answer (valid history), without the 5 MB.
    expect(assistant).toMatchObject({
      content: 'here goes',
      toolCalls: [{ id: 'big', name: 'add', arguments: '{"truncated":true}' }],
    });
    expect(seen.find((m) => m.role === 'tool')).toEqual({
      role: 'tool',
      toolCallId: 'big',
      name: 'add',
      content: `Error: the arguments for add are ${huge.length} characters, over the limit of 200000; send less (write large content to a file with python_execute instead)`,
    });
    expect(llm.requests[2]?.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toContain('3');
    expect(JSON.stringify(result.state).length).toBeLessThan(1_000_000);
  });

  it('through the SDK and a real server too', async () => {
    const server = await serve([{ toolCalls: [{ name: 'add', arguments: huge, id: 'big' }] }, { content: 'done' }]);
    const result = await run(createAgent({ name: 'calc', tools: [add] }), 'add', { llm: llmFor(server) });
    expect(result.answer).toBe('done');
    const sent = server.requests[1]?.messages ?? [];
    expect(sent.find((m) => m.role === 'assistant')?.tool_calls).toEqual([
      { id: 'big', type: 'function', function: { name: 'add', arguments: '{"truncated":true}' } },
    ]);
    expect(sent.find((m) => m.role === 'tool')).toMatchObject({ tool_call_id: 'big' });
    expect(JSON.stringify(sent).length).toBeLessThan(100_000);
    expect(JSON.stringify(result.state).length).toBeLessThan(1_000_000);
  });

  it('so is a tool name: a 5 MB one is cut before it is kept or echoed', async () => {
    const llm = scriptedLlm([{ toolCalls: [{ name: 'n'.repeat(5_000_000), arguments: {} }] }, { content: 'done' }]);
    const result = await run(createAgent({ name: 'calc', tools: [add] }), 'add', { llm });
    expect(result.answer).toBe('done');
    expect(llm.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toBe(
      `Error: unknown tool '${'n'.repeat(100)}…'. Available tools: add.`,
    );
    expect(JSON.stringify(result.state).length).toBeLessThan(10_000);
  });

  it('the cap is the agent’s maxToolArgsChars; at the cap a call still runs', async () => {
    const exact = '{"a": 1, "b": 2}';
    const llm = scriptedLlm([
      {
        toolCalls: [
          { name: 'add', arguments: exact, id: 'fits' },
          { name: 'add', arguments: `${exact} `, id: 'over' },
        ],
      },
      { content: 'done' },
    ]);
    const agent = createAgent({ name: 'calc', tools: [add], maxToolArgsChars: exact.length });
    await run(agent, 'add', { llm });
    const tools = llm.requests[1]?.messages.filter((m) => m.role === 'tool') ?? [];
    expect(tools.map((m) => m.content)).toEqual([
      '3',
      `Error: the arguments for add are ${exact.length + 1} characters, over the limit of ${exact.length}; send less (write large content to a file with python_execute instead)`,
    ]);
  });
});
