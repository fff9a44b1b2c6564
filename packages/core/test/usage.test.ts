import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { addUsage, costOf, emptyUsage, type Usage, usageSince } from '../src/kernel/state.js';
import { restoreState } from '../src/kernel/stateSchema.js';
import { call, done, drive, on, testConfig } from './helpers.js';

const fixture = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', file), 'utf8'));

const priced: Usage = {
  inputTokens: 1000,
  outputTokens: 100,
  llmCalls: 1,
  cachedInputTokens: 800,
  reasoningTokens: 40,
  costUsd: 0.1,
};

describe('addUsage', () => {
  it('sums cached, cache-write and reasoning tokens and the cost', () => {
    const more: Usage = { inputTokens: 10, outputTokens: 1, llmCalls: 1, cacheWriteTokens: 5, costUsd: 0.2 };
    expect(addUsage(priced, more)).toEqual({
      inputTokens: 1010,
      outputTokens: 101,
      llmCalls: 2,
      cachedInputTokens: 800,
      cacheWriteTokens: 5,
      reasoningTokens: 40,
      // Kept exact, not 0.30000000000000004.
      costUsd: 0.3,
    });
  });

  it('leaves out what no call reported, so unpriced usage looks as it always did', () => {
    expect(addUsage(emptyUsage, { inputTokens: 3, outputTokens: 2, llmCalls: 1 })).toEqual({
      inputTokens: 3,
      outputTokens: 2,
      llmCalls: 1,
    });
  });

  it('makes the cost unknown once one call had no price, and keeps it unknown', () => {
    const unknown = addUsage(priced, { inputTokens: 5, outputTokens: 5, llmCalls: 1, costUsd: null });
    expect(unknown.costUsd).toBeNull();
    expect(addUsage(unknown, priced).costUsd).toBeNull();
    // A call that reported tokens but no cost at all was not priced either.
    expect(addUsage(priced, { inputTokens: 5, outputTokens: 5, llmCalls: 1 }).costUsd).toBeNull();
    expect(addUsage({ inputTokens: 5, outputTokens: 5, llmCalls: 1 }, priced).costUsd).toBeNull();
  });

  it('counts a priced call after a start with no calls as known', () => {
    expect(addUsage(emptyUsage, priced).costUsd).toBe(0.1);
    // A tool that made no model calls adds nothing to pay for.
    expect(addUsage(priced, { inputTokens: 0, outputTokens: 0, llmCalls: 0 }).costUsd).toBe(0.1);
  });
});

describe('costOf', () => {
  it('is the recorded cost, zero before any call, unknown for calls made without a price', () => {
    expect(costOf(priced)).toBe(0.1);
    expect(costOf(emptyUsage)).toBe(0);
    expect(costOf({ ...priced, costUsd: null })).toBeNull();
    expect(costOf({ inputTokens: 1, outputTokens: 1, llmCalls: 1 })).toBeNull();
  });
});

describe('usageSince', () => {
  it("gives one run's share of every field", () => {
    const before = priced;
    const now = addUsage(before, {
      inputTokens: 500,
      outputTokens: 50,
      llmCalls: 2,
      cachedInputTokens: 400,
      costUsd: 0.05,
    });
    expect(usageSince(now, before)).toEqual({
      inputTokens: 500,
      outputTokens: 50,
      llmCalls: 2,
      cachedInputTokens: 400,
      reasoningTokens: 0,
      costUsd: 0.05,
    });
  });

  it('is unknown in cost when the total was unknown before or is now', () => {
    const before = { ...priced, costUsd: null };
    expect(usageSince(addUsage(before, priced), before).costUsd).toBeNull();
    expect(usageSince({ ...priced, llmCalls: 2, costUsd: null }, priced).costUsd).toBeNull();
  });
});

describe('the reducer counts what a call reports', () => {
  it('adds cached and reasoning tokens and cost from llmResponded and from a tool', () => {
    const config = testConfig();
    const reply = {
      type: 'llmResponded' as const,
      content: '',
      toolCalls: [call('echo', {}, 'a')],
      usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 60, reasoningTokens: 4, costUsd: 0.002 },
    };
    const { state } = drive(config, 'go', [reply]);
    expect(state.usage).toEqual({
      inputTokens: 100,
      outputTokens: 10,
      llmCalls: 1,
      cachedInputTokens: 60,
      reasoningTokens: 4,
      costUsd: 0.002,
    });
    const child = { inputTokens: 50, outputTokens: 5, llmCalls: 2, cachedInputTokens: 20, costUsd: 0.001 };
    const [next] = on(config, state, { type: 'toolCompleted', callId: 'a', output: 'ok', usage: child });
    expect(next.usage).toMatchObject({ inputTokens: 150, llmCalls: 3, cachedInputTokens: 80, costUsd: 0.003 });
  });

  it('makes the cost unknown when a reply reports no price', () => {
    const config = testConfig();
    const pricedReply = {
      type: 'llmResponded' as const,
      content: '',
      toolCalls: [call('echo', {}, 'a')],
      usage: { inputTokens: 10, outputTokens: 2, costUsd: 0.001 },
    };
    const unpriced = {
      type: 'llmResponded' as const,
      content: 'done',
      toolCalls: [],
      usage: { inputTokens: 10, outputTokens: 2 },
    };
    const { state } = drive(config, 'go', [pricedReply, done('a'), unpriced]);
    expect(state.usage.llmCalls).toBe(2);
    expect(state.usage.costUsd).toBeNull();
  });
});

describe('saved states', () => {
  it('load without the new usage fields, and with them', () => {
    const saved = fixture('state-v2-finished.json');
    const without = restoreState(saved);
    expect(without.isOk()).toBe(true);
    const withFields = { ...saved, usage: { ...(saved.usage as object), ...priced } };
    const loaded = restoreState(JSON.parse(JSON.stringify(withFields)));
    expect(loaded.isOk() && loaded.value.usage).toEqual(priced);
    const unknown = { ...saved, usage: { ...(saved.usage as object), ...priced, costUsd: null } };
    const again = restoreState(JSON.parse(JSON.stringify(unknown)));
    expect(again.isOk() && again.value.usage.costUsd).toBeNull();
  });

  it('refuses a negative or non-numeric cost, naming the field', () => {
    const saved = fixture('state-v2-finished.json');
    for (const costUsd of [-1, '0.1']) {
      const result = restoreState({ ...saved, usage: { ...(saved.usage as object), costUsd } });
      expect(result.isOk()).toBe(false);
      if (!result.isOk()) expect(result.error.message).toContain('usage.costUsd');
    }
  });
});
