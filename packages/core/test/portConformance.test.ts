import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { errAsync, ResultAsync } from '../src/result.js';
import { assertLlmPortConforms, checkLlmPort } from '../src/testing/portConformance.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { startOpenAiServer } from '../src/testing/server.js';
import { readmeOf, runSnippet } from './readmeCheck.js';

// The port under test, at a fresh stand-in serving the check's script.
const openAiPort = async (script: Parameters<typeof startOpenAiServer>[0]['script'], stream: boolean) => {
  const server = await startOpenAiServer({ script });
  const port = createOpenAiLlm({
    model: 'gpt-4o',
    apiKey: 'test',
    baseURL: server.baseURL,
    stream,
    maxRetries: 3,
    vision: true,
  });
  return { port, close: () => server.close() };
};

describe('the LLM port conformance kit', () => {
  it('passes the OpenAI port, streamed and not', async () => {
    const report = await assertLlmPortConforms({
      connect: (script, { stream }) => openAiPort(script, stream),
      capabilities: { reasoning: false },
    });
    expect(report.checks.filter((c) => c.status === 'passed').length).toBeGreaterThan(15);
  });

  it('passes the in-process scripted model, its streaming and retry checks not applicable', async () => {
    const report = await checkLlmPort({
      connect: async (script) => ({ port: scriptedLlm(script), close: async () => {} }),
      capabilities: { streaming: false, retries: false, reasoning: true },
    });
    expect(report.failures.map((c) => `${c.name}: ${c.detail}`)).toEqual([]);
    expect(report.checks.filter((c) => c.status === 'not applicable').map((c) => c.name)).toContain(
      'streaming: the text deltas join to the reply',
    );
  });

  it('reports what a broken port does wrong, check by check', async () => {
    // A port that forgets tool calls and calls every failure a server error.
    const report = await checkLlmPort({
      connect: async (script) => {
        const inner = scriptedLlm(script);
        return {
          port: {
            model: inner.model,
            complete: (request, options) =>
              inner
                .complete(request, options)
                .map((reply) => ({ ...reply, toolCalls: [] }))
                .mapErr((error) => ({ ...error, kind: 'server' as const })),
          },
          close: async () => {},
        };
      },
      capabilities: { streaming: false },
    });
    const failed = report.failures.map((c) => c.name);
    expect(failed).toContain('parallel tool calls: every call with its own id, name and arguments');
    expect(failed).toContain('a refused key is an auth error, not retried');
    expect(failed).not.toContain('a text reply: its text, no calls, finish reason stop');
    await expect(
      assertLlmPortConforms({
        connect: async () => ({
          port: { model: 'm', complete: () => errAsync({ kind: 'server', message: 'no' }) },
          close: async () => {},
        }),
        capabilities: { streaming: false },
      }),
    ).rejects.toThrow(/fails \d+ conformance check/);
  });

  it('reports a port that never answers as hung, and goes on', async () => {
    const report = await checkLlmPort({
      connect: async () => ({
        port: { model: 'm', complete: () => new ResultAsync(new Promise(() => {})) },
        close: async () => {},
      }),
      capabilities: { streaming: false, images: false, cachedTokens: false },
      checkTimeoutMs: 200,
    });
    expect(report.failures.length).toBeGreaterThan(10);
    expect(report.failures[0]?.detail).toMatch(/no answer within 200 ms/);
  });
});

it("the README's conformance snippet runs as written and prints what the README says", async () => {
  const { readme, block } = await readmeOf(join(import.meta.dirname, '..'));
  const printed = await runSnippet(
    join(import.meta.dirname, '..'),
    block('## Bring your own model: the `LlmPort`', 'ts'),
  );
  expect(readme).toContain(`prints \`${printed.trim()}\`.`);
  expect(printed).toMatch(/^\d+ checks passed, 0 failed\n$/);
});
