import { expect, it } from 'vitest';
import { costText, usageText } from '../src/usageText.js';

it('says what a run used: the cache and reasoning counts a provider reported, and the cost or that it is unknown', () => {
  expect(usageText({ inputTokens: 12_345, outputTokens: 456, llmCalls: 3 })).toBe('12,345 in · 456 out · cost unknown');
  expect(usageText({ inputTokens: 0, outputTokens: 0, llmCalls: 0 })).toBe('0 in · 0 out · $0');
  expect(
    usageText({
      inputTokens: 12_345,
      outputTokens: 456,
      llmCalls: 3,
      cachedInputTokens: 9_876,
      cacheWriteTokens: 1_000,
      reasoningTokens: 120,
      costUsd: 0.0123,
    }),
  ).toBe('12,345 in (9,876 cached, 1,000 written to cache) · 456 out (120 reasoning) · $0.0123');
  expect(usageText({ inputTokens: 10, outputTokens: 1, llmCalls: 1, costUsd: null })).toBe(
    '10 in · 1 out · cost unknown',
  );
});

it('writes a cost to four places below a dollar, to cents above, and a sliver as such', () => {
  expect([0.00001, 0.00012345, 0.5, 12.3456, 0, null].map(costText)).toEqual([
    '<$0.0001',
    '$0.0001',
    '$0.5000',
    '$12.35',
    '$0',
    'cost unknown',
  ]);
});
