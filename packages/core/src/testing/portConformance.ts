import type { LlmRequest } from '../kernel/effects.js';
import type { ImageData, Message, ToolCall } from '../kernel/messages.js';
import type { ToolSpec } from '../kernel/tool.js';
import type { LlmCallOptions, LlmDelta, LlmError, LlmErrorKind, LlmPort, LlmResponse } from '../llm/llm.js';
import { messageOf } from '../messageOf.js';
import type { Result, ResultAsync } from '../result.js';
import type { ScriptedFailure, ScriptedReply } from './script.js';

/** A port under test, talking to a stand-in of its provider that answers from a script. */
export interface ConnectedPort {
  readonly port: LlmPort;
  /** Stops the stand-in (and anything else `connect` started). */
  close(): Promise<void>;
}

/** What a port's provider can do: the checks of what it cannot are reported as not applicable. */
export interface PortCapabilities {
  /** Deltas reach `onDelta` as the reply streams (default true). */
  readonly streaming?: boolean;
  /** Images in user and tool messages reach the model (default true). */
  readonly images?: boolean;
  /** The provider reports input served from its prompt cache (default true). */
  readonly cachedTokens?: boolean;
  /** Replies carry the model's reasoning, to be sent back (default false). */
  readonly reasoning?: boolean;
  /** The port retries rate limits and cut connections itself (default true; an in-process fake answers failures as scripted). */
  readonly retries?: boolean;
}

export interface PortConformanceOptions {
  /**
   * Makes the port under test, backed by a stand-in of its provider serving `script` — one reply
   * per request, retries included. The port must retry (at least 2 retries, with short waits:
   * the script's failures ask for none), stream when `stream` is true, and see images.
   */
  readonly connect: (script: readonly ScriptedReply[], options: { readonly stream: boolean }) => Promise<ConnectedPort>;
  readonly capabilities?: PortCapabilities;
  /** How the stand-in is told to answer "overloaded" (default HTTP 529, Anthropic's `overloaded_error`). */
  readonly overloaded?: ScriptedFailure['error'];
  /** The longest one check may take before it is reported as hung, in ms (default 30 000). */
  readonly checkTimeoutMs?: number;
}

export interface ConformanceCheck {
  readonly name: string;
  readonly status: 'passed' | 'failed' | 'not applicable';
  /** What was wrong, for a failed check. */
  readonly detail?: string;
}

export interface ConformanceReport {
  readonly checks: readonly ConformanceCheck[];
  readonly failures: readonly ConformanceCheck[];
}

/** A check's body: the connected port, and a way to say what is wrong. */
type CheckBody = (call: PortCall, expect: (ok: boolean, detail: string) => void) => Promise<void>;

interface PortCall {
  complete(request: LlmRequest, options?: LlmCallOptions): ResultAsync<LlmResponse, LlmError>;
}

interface CheckSpec {
  readonly name: string;
  readonly script: readonly ScriptedReply[];
  readonly stream?: boolean;
  readonly needs?: keyof PortCapabilities;
  readonly run: CheckBody;
}

const weatherTool: ToolSpec = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const clockTool: ToolSpec = {
  name: 'get_time',
  description: 'The local time in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

// A 1×1 transparent PNG.
const PIXEL: ImageData = {
  mimeType: 'image/png',
  base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
};

const ask = (messages: readonly Message[], tools: readonly ToolSpec[] = []): LlmRequest => ({
  messages,
  tools,
  toolChoice: 'auto',
  cache: { key: 'conformance-run', stableMessages: Math.max(0, messages.length - 1) },
});
const question = (text: string) =>
  ask([
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: text },
  ]);

const twoCalls: readonly ToolCall[] = [
  { id: 'call_a', name: 'get_weather', arguments: '{"city":"Kyoto"}' },
  { id: 'call_b', name: 'get_time', arguments: '{"city":"Osaka"}' },
];
/** A history with a reply that called two tools and both results, as the next request carries it. */
const afterTwoCalls = (toolImage?: ImageData): LlmRequest =>
  ask(
    [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Weather in Kyoto and time in Osaka?' },
      { role: 'assistant', content: 'Looking both up.', toolCalls: twoCalls },
      { role: 'tool', toolCallId: 'call_a', name: 'get_weather', content: 'Sunny, 21 °C' },
      {
        role: 'tool',
        toolCallId: 'call_b',
        name: 'get_time',
        content: '14:05',
        ...(toolImage ? { image: toolImage } : {}),
      },
    ],
    [weatherTool, clockTool],
  );

const failing = (error: ScriptedFailure['error'], times: number): ScriptedReply[] =>
  Array.from({ length: times }, () => ({ error }));

const describeResult = (result: Result<LlmResponse, LlmError>): string =>
  result.isOk()
    ? `a reply (${JSON.stringify(result.value.content).slice(0, 80)}, ${result.value.toolCalls.length} calls)`
    : `${result.error.kind}: ${result.error.message.slice(0, 160)}`;

function expectReply(
  result: Result<LlmResponse, LlmError>,
  expect: (ok: boolean, detail: string) => void,
): LlmResponse | undefined {
  expect(result.isOk(), `expected a reply, got ${describeResult(result)}`);
  return result.isOk() ? result.value : undefined;
}

function expectKind(
  result: Result<LlmResponse, LlmError>,
  kinds: readonly LlmErrorKind[],
  expect: (ok: boolean, detail: string) => void,
): void {
  expect(
    !result.isOk() && kinds.includes(result.error.kind),
    `expected a ${kinds.join(' or ')} error, got ${describeResult(result)}`,
  );
}

const parsed = (json: string): unknown => {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
};
const sameJson = (a: string, b: string) => JSON.stringify(parsed(a)) === JSON.stringify(parsed(b));

function checks(overloaded: ScriptedFailure['error']): CheckSpec[] {
  return [
    {
      name: 'a text reply: its text, no calls, finish reason stop',
      script: [{ content: 'Hello there.' }],
      run: async (port, expect) => {
        const reply = expectReply(await port.complete(question('Say hello')), expect);
        if (!reply) return;
        expect(reply.content === 'Hello there.', `content was ${JSON.stringify(reply.content)}`);
        expect(reply.toolCalls.length === 0, `${reply.toolCalls.length} tool calls in a text reply`);
        expect(
          reply.finishReason === undefined || reply.finishReason === 'stop',
          `finish reason ${reply.finishReason}`,
        );
      },
    },
    {
      name: 'parallel tool calls: every call with its own id, name and arguments',
      script: [
        {
          content: 'Looking both up.',
          toolCalls: [
            { id: 'call_a', name: 'get_weather', arguments: { city: 'Kyoto' } },
            { id: 'call_b', name: 'get_time', arguments: { city: 'Osaka' } },
          ],
        },
      ],
      run: async (port, expect) => {
        const request = ask(
          [{ role: 'user', content: 'Weather in Kyoto and time in Osaka?' }],
          [weatherTool, clockTool],
        );
        const reply = expectReply(await port.complete(request), expect);
        if (!reply) return;
        expect(reply.toolCalls.length === 2, `${reply.toolCalls.length} calls, expected 2`);
        const [a, b] = reply.toolCalls;
        expect(a?.name === 'get_weather' && b?.name === 'get_time', `names ${reply.toolCalls.map((c) => c.name)}`);
        expect(
          a !== undefined &&
            b !== undefined &&
            sameJson(a.arguments, '{"city":"Kyoto"}') &&
            sameJson(b.arguments, '{"city":"Osaka"}'),
          `arguments ${reply.toolCalls.map((c) => c.arguments).join(', ')}`,
        );
        expect(Boolean(a?.id) && Boolean(b?.id) && a?.id !== b?.id, `ids ${reply.toolCalls.map((c) => c.id)}`);
        expect(
          reply.finishReason === undefined || reply.finishReason === 'tool_calls',
          `finish reason ${reply.finishReason}`,
        );
      },
    },
    {
      name: 'a history of calls and their results is accepted',
      script: [{ content: 'Sunny in Kyoto; 14:05 in Osaka.' }],
      run: async (port, expect) => {
        const reply = expectReply(await port.complete(afterTwoCalls()), expect);
        expect(reply?.content === 'Sunny in Kyoto; 14:05 in Osaka.', `content ${JSON.stringify(reply?.content)}`);
      },
    },
    {
      name: 'usage: input and output tokens as reported',
      script: [{ content: 'ok', usage: { inputTokens: 1200, outputTokens: 30 } }],
      run: async (port, expect) => {
        const reply = expectReply(await port.complete(question('Count')), expect);
        const usage = reply?.usage;
        expect(
          usage?.inputTokens === 1200 && usage.outputTokens === 30,
          `usage ${JSON.stringify(usage)}, expected 1200 in and 30 out`,
        );
      },
    },
    {
      name: 'usage: cached input tokens, counted in the input',
      needs: 'cachedTokens',
      script: [{ content: 'ok', usage: { inputTokens: 1200, outputTokens: 30, cachedInputTokens: 1000 } }],
      run: async (port, expect) => {
        const usage = expectReply(await port.complete(question('Count')), expect)?.usage;
        expect(
          usage?.inputTokens === 1200 && usage.cachedInputTokens === 1000,
          `usage ${JSON.stringify(usage)}, expected 1200 in of which 1000 cached`,
        );
      },
    },
    {
      name: 'streaming: the text deltas join to the reply',
      needs: 'streaming',
      stream: true,
      script: [{ content: 'A streamed reply in several pieces, long enough to be cut up.' }],
      run: async (port, expect) => {
        const deltas: LlmDelta[] = [];
        const reply = expectReply(
          await port.complete(question('Stream'), { onDelta: (delta) => deltas.push(delta) }),
          expect,
        );
        const text = deltas.map((d) => d.text ?? '').join('');
        expect(deltas.length > 1, `${deltas.length} deltas for a long reply`);
        expect(
          text === reply?.content,
          `deltas joined to ${JSON.stringify(text)}, the reply is ${JSON.stringify(reply?.content)}`,
        );
      },
    },
    {
      name: "streaming: tool calls' pieces join to each call",
      needs: 'streaming',
      stream: true,
      script: [
        {
          toolCalls: [
            { id: 'call_a', name: 'get_weather', arguments: { city: 'Kyoto, the old capital of Japan' } },
            { id: 'call_b', name: 'get_time', arguments: { city: 'Osaka' } },
          ],
        },
      ],
      run: async (port, expect) => {
        const pieces = new Map<number, { id?: string; name?: string; arguments: string }>();
        const reply = expectReply(
          await port.complete(ask([{ role: 'user', content: 'Both?' }], [weatherTool, clockTool]), {
            onDelta: ({ toolCall }) => {
              if (!toolCall) return;
              const seen = pieces.get(toolCall.index) ?? { arguments: '' };
              pieces.set(toolCall.index, {
                ...seen,
                ...(toolCall.id ? { id: toolCall.id } : {}),
                ...(toolCall.name ? { name: toolCall.name } : {}),
                arguments: seen.arguments + (toolCall.arguments ?? ''),
              });
            },
          }),
          expect,
        );
        if (!reply) return;
        expect(
          pieces.size === reply.toolCalls.length,
          `${pieces.size} streamed calls, ${reply.toolCalls.length} in the reply`,
        );
        [...pieces.values()].forEach((streamed, i) => {
          const call = reply.toolCalls[i];
          expect(
            call !== undefined && streamed.name === call.name && sameJson(streamed.arguments, call.arguments),
            `streamed call ${i} was ${JSON.stringify(streamed)}, the reply's ${JSON.stringify(call)}`,
          );
        });
      },
    },
    {
      name: 'a throwing delta listener ends the request with its error',
      needs: 'streaming',
      stream: true,
      script: [{ content: 'A streamed reply in several pieces, long enough to be cut up.' }],
      run: async (port, expect) => {
        const thrown = new Error('the listener gave up');
        const outcome = await port
          .complete(question('Stream'), {
            onDelta: () => {
              throw thrown;
            },
          })
          .then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
        expect(
          'error' in outcome && outcome.error === thrown,
          `complete gave ${'result' in outcome ? describeResult(outcome.result) : messageOf(outcome.error)}`,
        );
      },
    },
    {
      name: 'an abort ends the request as aborted',
      script: [{ content: 'too late', delayMs: 5_000 }],
      run: async (port, expect) => {
        const controller = new AbortController();
        const pending = port.complete(question('Wait'), { signal: controller.signal });
        setTimeout(() => controller.abort(), 50);
        expectKind(await pending, ['aborted'], expect);
      },
    },
    {
      name: 'a rate limit is retried, then the reply comes',
      needs: 'retries',
      script: [
        { error: { status: 429, message: 'Slow down', type: 'rate_limit_error', retryAfter: 0 } },
        { content: 'ok after waiting' },
      ],
      run: async (port, expect) => {
        const reply = expectReply(await port.complete(question('Hi')), expect);
        expect(reply?.content === 'ok after waiting', `content ${JSON.stringify(reply?.content)}`);
      },
    },
    {
      name: 'a rate limit that persists is a rate_limit error',
      script: failing({ status: 429, message: 'Slow down', type: 'rate_limit_error', retryAfter: 0 }, 8),
      run: async (port, expect) => expectKind(await port.complete(question('Hi')), ['rate_limit'], expect),
    },
    {
      name: 'an overloaded provider is an overloaded error',
      script: failing(overloaded, 8),
      run: async (port, expect) => expectKind(await port.complete(question('Hi')), ['overloaded'], expect),
    },
    {
      name: 'a refused key is an auth error, not retried',
      script: [
        { error: { status: 401, message: 'invalid x-api-key', type: 'authentication_error' } },
        { content: 'retried' },
      ],
      run: async (port, expect) => expectKind(await port.complete(question('Hi')), ['auth'], expect),
    },
    {
      name: 'a prompt too long is a context_length error',
      script: [
        {
          error: {
            status: 400,
            message: 'prompt is too long: 210000 tokens > 200000 maximum; context length exceeded',
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
          },
        },
        { content: 'retried' },
      ],
      run: async (port, expect) => expectKind(await port.complete(question('Hi')), ['context_length'], expect),
    },
    {
      name: 'a bad request is a bad_request error',
      script: [
        { error: { status: 400, message: 'tools.0.name: invalid', type: 'invalid_request_error' } },
        { content: 'retried' },
      ],
      run: async (port, expect) => expectKind(await port.complete(question('Hi')), ['bad_request'], expect),
    },
    {
      name: 'a server error that persists is a server error',
      script: failing({ status: 500, message: 'internal error', type: 'api_error' }, 8),
      run: async (port, expect) => expectKind(await port.complete(question('Hi')), ['server', 'overloaded'], expect),
    },
    {
      name: 'a connection cut before the reply is retried',
      needs: 'retries',
      script: [{ error: {} }, { content: 'ok after the cut' }],
      run: async (port, expect) => {
        const reply = expectReply(await port.complete(question('Hi')), expect);
        expect(reply?.content === 'ok after the cut', `content ${JSON.stringify(reply?.content)}`);
      },
    },
    {
      name: 'a stream cut mid-way is retried, and the deltas restart',
      needs: 'streaming',
      stream: true,
      script: [
        { content: 'A first attempt that breaks off half way through.', cutAfter: 3 },
        { content: 'The whole second attempt.' },
      ],
      run: async (port, expect) => {
        const deltas: LlmDelta[] = [];
        const reply = expectReply(
          await port.complete(question('Stream'), { onDelta: (delta) => deltas.push(delta) }),
          expect,
        );
        expect(reply?.content === 'The whole second attempt.', `content ${JSON.stringify(reply?.content)}`);
        const restart = deltas.findIndex((d) => d.restart);
        const after = deltas
          .slice(restart + 1)
          .map((d) => d.text ?? '')
          .join('');
        expect(
          restart >= 0 && after === reply?.content,
          `no restart delta before the second attempt's text (${JSON.stringify(after)})`,
        );
      },
    },
    {
      name: 'a reply at the output limit says so',
      script: [{ content: 'This answer was cut at the', finishReason: 'length' }],
      run: async (port, expect) => {
        const reply = expectReply(await port.complete(question('Long')), expect);
        expect(reply?.finishReason === 'length', `finish reason ${reply?.finishReason}`);
      },
    },
    {
      name: 'images in user and tool messages are accepted',
      needs: 'images',
      script: [{ content: 'A transparent pixel.' }, { content: 'The tool showed a pixel.' }],
      run: async (port, expect) => {
        const seen = await port.complete(ask([{ role: 'user', content: 'What is this?', image: PIXEL }]));
        expectReply(seen, expect);
        expectReply(await port.complete(afterTwoCalls(PIXEL)), expect);
      },
    },
    {
      name: 'reasoning comes with the reply, and a history with it is accepted',
      needs: 'reasoning',
      script: [
        { content: 'Four.', reasoning: [{ text: 'Two and two make four.', signature: 'sig-1' }] },
        { content: 'Yes.' },
      ],
      run: async (port, expect) => {
        const reply = expectReply(await port.complete(question('2+2?')), expect);
        const reasoning = reply?.reasoning ?? [];
        expect(
          reasoning.some((part) => part.text.includes('Two and two')),
          `reasoning ${JSON.stringify(reasoning)}`,
        );
        const next = ask([
          { role: 'user', content: '2+2?' },
          { role: 'assistant', content: 'Four.', reasoning },
          { role: 'user', content: 'Sure?' },
        ]);
        expectReply(await port.complete(next), expect);
      },
    },
  ];
}

/** Runs `body` against a port that has `timeoutMs` to answer; a hang is a failure, not a stuck kit. */
async function within(timeoutMs: number, body: () => Promise<void>): Promise<string | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([body().then(() => undefined), hung]);
  } catch (error) {
    return `threw: ${messageOf(error)}`;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The LLM port conformance kit: runs a port — ours or one of your own — through what the kernel
 * relies on (text, parallel tool calls, a history of results, usage and cached tokens, streamed
 * deltas, abort, each error kind, retries of rate limits and cut streams, the output limit,
 * images, reasoning), each check against a fresh stand-in serving its script. Framework-free: it
 * returns a report; `assertLlmPortConforms` throws listing the failures.
 */
export async function checkLlmPort(options: PortConformanceOptions): Promise<ConformanceReport> {
  const capabilities: Required<PortCapabilities> = {
    streaming: true,
    images: true,
    cachedTokens: true,
    reasoning: false,
    retries: true,
    ...options.capabilities,
  };
  const timeoutMs = options.checkTimeoutMs ?? 30_000;
  const overloaded = options.overloaded ?? { status: 529, message: 'Overloaded', type: 'overloaded_error' };
  const results: ConformanceCheck[] = [];
  for (const spec of checks(overloaded)) {
    if (spec.needs && !capabilities[spec.needs]) {
      results.push({ name: spec.name, status: 'not applicable' });
      continue;
    }
    const problems: string[] = [];
    const expect = (ok: boolean, detail: string) => {
      if (!ok) problems.push(detail);
    };
    let connected: ConnectedPort | undefined;
    const hung = await within(timeoutMs, async () => {
      connected = await options.connect(spec.script, { stream: spec.stream ?? false });
      await spec.run(connected.port, expect);
    });
    await connected?.close().catch(() => {});
    if (hung) problems.push(hung);
    results.push(
      problems.length > 0
        ? { name: spec.name, status: 'failed', detail: problems.join('; ') }
        : { name: spec.name, status: 'passed' },
    );
  }
  return { checks: results, failures: results.filter((check) => check.status === 'failed') };
}

/** `checkLlmPort`, throwing an error that lists every failed check. */
export async function assertLlmPortConforms(options: PortConformanceOptions): Promise<ConformanceReport> {
  const report = await checkLlmPort(options);
  if (report.failures.length > 0) {
    const lines = report.failures.map((check) => `- ${check.name}: ${check.detail}`);
    throw new Error(`the LLM port fails ${report.failures.length} conformance check(s):\n${lines.join('\n')}`);
  }
  return report;
}
