import { costOf, type Usage } from '@openmanus/core';

const count = (n: number) => n.toLocaleString('en-US');

/** A cost as a person reads it: cents to four places, fractions of a hundredth of a cent as such. */
export function costText(usd: number | null): string {
  if (usd === null) return 'cost unknown';
  if (usd === 0) return '$0';
  if (usd < 0.0001) return '<$0.0001';
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

/**
 * What a run used so far, as the CLI prints it: `12,345 in (9,876 cached) · 456 out · $0.0123`;
 * the cache and reasoning counts where the provider reported them, `cost unknown` where no price.
 */
export function usageText(usage: Usage): string {
  const { cachedInputTokens, cacheWriteTokens, reasoningTokens } = usage;
  const inputParts = [
    ...(cachedInputTokens !== undefined ? [`${count(cachedInputTokens)} cached`] : []),
    ...(cacheWriteTokens ? [`${count(cacheWriteTokens)} written to cache`] : []),
  ];
  const input = `${count(usage.inputTokens)} in${inputParts.length > 0 ? ` (${inputParts.join(', ')})` : ''}`;
  const output = `${count(usage.outputTokens)} out${reasoningTokens ? ` (${count(reasoningTokens)} reasoning)` : ''}`;
  return `${input} · ${output} · ${costText(costOf(usage))}`;
}
