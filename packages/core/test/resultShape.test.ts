// The one result shape (neverthrow's) where the shell meets code of the host's: results made by
// another copy of neverthrow, and the plain `{ ok, value | error }` objects of 0.1.
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import type { LlmPort } from '../src/llm/llm.js';
import { Err, err, ok, ResultAsync, resultOf } from '../src/result.js';
import { run } from '../src/shell/run.js';
import { toolOutputOf } from '../src/shell/toolExecution.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { defineTool, type Tool } from '../src/tools/defineTool.js';

type Neverthrow = typeof import('neverthrow');

// A second copy of neverthrow, as a user's project may install beside ours: the same code, loaded
// from another file, so its classes are not ours (`instanceof` tells them apart).
let other: Neverthrow;
let copyDir: string;
beforeAll(async () => {
  copyDir = await mkdtemp(join(tmpdir(), 'neverthrow-copy-'));
  const ours = createRequire(import.meta.url).resolve('neverthrow');
  const copy = join(copyDir, 'neverthrow.mjs');
  await copyFile(join(ours, '..', 'index.es.js'), copy);
  other = await import(pathToFileURL(copy).href);
});
afterAll(async () => {
  await rm(copyDir, { recursive: true, force: true });
});

const toolReturning = (returned: unknown): Tool =>
  defineTool({
    name: 'probe',
    description: 'Returns what the test gives it.',
    parameters: {},
    execute: () => returned as never,
  });

/** A run whose model calls `probe` once, then answers: the observation the tool's return became. */
async function observationOf(tool: Tool): Promise<string | undefined> {
  const llm = scriptedLlm([{ toolCalls: [{ name: tool.spec.name, arguments: {} }] }, { content: 'done' }]);
  const outcome = await run(createAgent({ name: 'a', tools: [tool] }), 'go', { llm });
  expect(outcome.status).toBe('finished');
  return outcome.state.messages.find((message) => message.role === 'tool')?.content;
}

describe('a result of another copy of neverthrow', () => {
  it('is another class, so it is told by its methods', () => {
    const foreign = other.err('no');
    expect(foreign instanceof Err).toBe(false);
    expect(resultOf(foreign)?.isErr()).toBe(true);
    expect(resultOf(other.ok(3))).toEqual(ok(3));
  });

  it("from a tool: its err(...) is the model's error observation, its ok(...) the output", async () => {
    expect(await observationOf(toolReturning(other.err('the disk is full')))).toBe('Error: the disk is full');
    expect(await observationOf(toolReturning(other.ok('written')))).toBe('written');
    // Its ResultAsync too: a thenable of its Result.
    expect(await observationOf(toolReturning(other.errAsync(new Error('quota spent'))))).toBe('Error: quota spent');
  });

  it("from an LLM port: its ok(...) is the reply, its err(...) the run's coded failure", async () => {
    const answering: LlmPort = {
      model: 'other-copy',
      complete: () => other.okAsync({ content: 'from the other copy', toolCalls: [] }) as never,
    };
    expect((await run(createAgent({ name: 'a' }), 'hi', { llm: answering })).answer).toBe('from the other copy');
    const refusing: LlmPort = {
      model: 'other-copy',
      complete: () => other.errAsync({ kind: 'auth', message: 'bad key', status: 401 }) as never,
    };
    expect((await run(createAgent({ name: 'a' }), 'hi', { llm: refusing })).error).toMatchObject({
      code: 'LLM_AUTH',
      status: 401,
    });
  });
});

describe('the plain { ok, value | error } result of 0.1 (still taken)', () => {
  it('from a tool: the same observation as the Result it means', async () => {
    expect(await observationOf(toolReturning({ ok: false, error: 'the disk is full' }))).toBe(
      'Error: the disk is full',
    );
    expect(await observationOf(toolReturning({ ok: true, value: 'written' }))).toBe('written');
    expect(toolOutputOf({ ok: true, value: { output: 'shown', brief: 'b' } } as never)).toEqual(
      ok({ output: 'shown', brief: 'b' }),
    );
  });

  it("from a tool's parse: a refusal is the model's invalid-arguments observation", async () => {
    const tool: Tool = {
      spec: { name: 'strict', description: 'Takes nothing.', parameters: {} },
      parse: () => ({ ok: false, error: 'no arguments, please' }) as never,
      execute: () => 'never ran',
    };
    expect(await observationOf(tool)).toBe('Error: invalid arguments for strict:\nno arguments, please');
  });

  it('from an LLM port: the reply, or its failure', async () => {
    // Written for 0.1: an async function resolving to the plain object (cast: the type now asks for a ResultAsync).
    const legacy = (answer: unknown): LlmPort => ({ model: 'legacy', complete: (async () => answer) as never });
    const answered = await run(createAgent({ name: 'a' }), 'hi', {
      llm: legacy({ ok: true, value: { content: 'as in 0.1', toolCalls: [] } }),
    });
    expect(answered.answer).toBe('as in 0.1');
    const failed = await run(createAgent({ name: 'a' }), 'hi', {
      llm: legacy({ ok: false, error: { kind: 'rate_limit', message: 'slow down', status: 429 } }),
    });
    expect(failed.error).toMatchObject({ code: 'LLM_RATE_LIMIT', status: 429 });
  });

  it('a port answering with no result at all fails the run, saying what it got', async () => {
    const llm: LlmPort = { model: 'broken', complete: () => new ResultAsync(Promise.resolve('hello' as never)) };
    const outcome = await run(createAgent({ name: 'a' }), 'hi', { llm });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('LLM_PORT_THREW');
    expect(outcome.error?.message).toContain('the port answered with string, not a Result');
  });

  it('an object that only looks like output is output, not a result', () => {
    expect(resultOf({ output: 'x' })).toBeUndefined();
    expect(resultOf({ ok: 'yes', value: 1 })).toBeUndefined();
    expect(resultOf(err('x'))).toEqual(err('x'));
  });
});

describe('one copy of neverthrow', () => {
  it('only core imports it: every other package takes the result shape from @openmanus/core', async () => {
    const repo = join(import.meta.dirname, '..', '..', '..');
    const importers: string[] = [];
    for (const group of ['packages', 'examples']) {
      for (const name of await readdir(join(repo, group))) {
        const src = join(repo, group, name, 'src');
        const files = await readdir(src, { recursive: true }).catch(() => []);
        for (const file of files.filter((f) => /\.m?[jt]sx?$/.test(f))) {
          const text = await readFile(join(src, file), 'utf8');
          if (/from 'neverthrow'|import\('neverthrow'\)|require\('neverthrow'\)/.test(text))
            importers.push(`${group}/${name}/src/${file}`);
        }
      }
    }
    expect(importers).toEqual(['packages/core/src/result.ts']);
  });
});
