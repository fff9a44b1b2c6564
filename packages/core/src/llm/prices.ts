import type { LlmUsage } from '../kernel/events.js';

/**
 * What a model costs, in USD per million tokens. A price without `cachedInput` (or `cacheWrite`)
 * cannot price a call that reports cached (or cache-written) tokens: that call's cost is unknown.
 */
export interface ModelPrice {
  /** Input tokens not served from the cache. */
  readonly input: number;
  /** Input tokens served from the prompt cache. */
  readonly cachedInput?: number;
  /** Input tokens written to the prompt cache, where the provider bills the write (Anthropic). */
  readonly cacheWrite?: number;
  /** Output tokens, reasoning included. */
  readonly output: number;
  /**
   * The price holds for requests of at most this many input tokens (a provider that charges
   * more for long prompts): a longer request's cost is unknown.
   */
  readonly maxInputTokens?: number;
}

/** Prices by model name, as config.toml's `[prices]` gives them. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

// OpenAI and DeepSeek bill a cache write as plain input (no surcharge).
const cachedAt = (input: number, cachedInput: number, output: number): ModelPrice => ({
  input,
  cachedInput,
  cacheWrite: input,
  output,
});

const anthropic = (input: number, output: number, maxInputTokens?: number): ModelPrice => ({
  input,
  // Anthropic's cache reads cost a tenth of the input, its (5-minute) cache writes 1.25 times it.
  cachedInput: input / 10,
  cacheWrite: input * 1.25,
  output,
  ...(maxInputTokens !== undefined ? { maxInputTokens } : {}),
});

/**
 * List prices as the providers published them in November 2025 (standard tier). Providers change
 * them: a port's `price` (config.toml's `[prices]`) overrides any. Gemini's cached prices are left
 * out (they changed more than once): a Gemini call that reports cached tokens has an unknown cost
 * unless its price is given.
 */
export const BUILT_IN_PRICES: PriceTable = {
  'gpt-4o': cachedAt(2.5, 1.25, 10),
  // The first gpt-4o snapshot kept its launch price and has no prompt cache.
  'gpt-4o-2024-05-13': { input: 5, output: 15 },
  'gpt-4o-mini': cachedAt(0.15, 0.075, 0.6),
  'gpt-4.1': cachedAt(2, 0.5, 8),
  'gpt-4.1-mini': cachedAt(0.4, 0.1, 1.6),
  'gpt-4.1-nano': cachedAt(0.1, 0.025, 0.4),
  o1: cachedAt(15, 7.5, 60),
  o3: cachedAt(2, 0.5, 8),
  'o3-mini': cachedAt(1.1, 0.55, 4.4),
  'o4-mini': cachedAt(1.1, 0.275, 4.4),
  'gpt-5': cachedAt(1.25, 0.125, 10),
  'gpt-5-mini': cachedAt(0.25, 0.025, 2),
  'gpt-5-nano': cachedAt(0.05, 0.005, 0.4),
  'claude-opus-4-5': anthropic(5, 25),
  'claude-opus-4-1': anthropic(15, 75),
  'claude-opus-4': anthropic(15, 75),
  // Past 200k input tokens (the long-context beta) Sonnet 4 and 4.5 cost more.
  'claude-sonnet-4-5': anthropic(3, 15, 200_000),
  'claude-sonnet-4': anthropic(3, 15, 200_000),
  'claude-3-7-sonnet': anthropic(3, 15),
  'claude-3-5-sonnet': anthropic(3, 15),
  'claude-haiku-4-5': anthropic(1, 5),
  'claude-3-5-haiku': anthropic(0.8, 4),
  'claude-3-haiku': { input: 0.25, cachedInput: 0.03, cacheWrite: 0.3, output: 1.25 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4 },
  'gemini-2.0-flash-lite': { input: 0.075, output: 0.3 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
  // Past 200k input tokens Gemini 2.5 Pro costs more.
  'gemini-2.5-pro': { input: 1.25, output: 10, maxInputTokens: 200_000 },
  // DeepSeek-V3.2: both names, one price (cache hits a tenth of a miss).
  'deepseek-chat': cachedAt(0.28, 0.028, 0.42),
  'deepseek-reasoner': cachedAt(0.28, 0.028, 0.42),
};

// A dated snapshot of a model: OpenAI's `-2024-08-06`, Anthropic's `-20250514`.
const SNAPSHOT = /-(?:\d{4}-\d{2}-\d{2}|\d{8})$/;

/** The price of `model` in `table`: under its exact name, else under its name without a snapshot's date. */
function exactOrUndated(table: PriceTable, model: string): ModelPrice | undefined {
  if (Object.hasOwn(table, model)) return table[model];
  const undated = model.replace(SNAPSHOT, '');
  return undated !== model && Object.hasOwn(table, undated) ? table[undated] : undefined;
}

// Bedrock's id of an Anthropic model (`anthropic.claude-3-7-sonnet-20250219-v1:0`), or of a
// cross-region inference profile of one in the commercial regions (`us.…`, `global.…`).
const BEDROCK_CLAUDE = /^(?:(global|us|eu|apac|jp|au)\.)?anthropic\.(claude-[a-z\d-]+-(\d{8}))-v\d+:\d+$/;
// From Claude Sonnet 4.5 on, Bedrock's regional endpoints cost more than its global ones.
const REGIONAL_PREMIUM_FROM = '20250929';

/**
 * Anthropic's name for the model a Bedrock id names, where Bedrock charges what Anthropic does:
 * on demand, in the commercial regions — for models from Claude Sonnet 4.5 on, through the global
 * profile only (the others' dearer prices are not in the table).
 */
function anthropicNameOf(model: string): string | undefined {
  const [, geo, name, date = ''] = BEDROCK_CLAUDE.exec(model) ?? [];
  if (name === undefined || (geo !== 'global' && date >= REGIONAL_PREMIUM_FROM)) return undefined;
  return name;
}

/**
 * The price of `model` in `table`: under its exact name, else, for a dated snapshot
 * (`gpt-4o-2024-08-06`), under the name without the date, else, for a Bedrock id of Claude
 * (`us.anthropic.claude-3-7-sonnet-20250219-v1:0`), as the Anthropic model it names (see
 * `anthropicNameOf`). Nothing else: never a guess.
 */
export function priceIn(table: PriceTable, model: string): ModelPrice | undefined {
  const price = exactOrUndated(table, model);
  if (price) return price;
  const anthropic = anthropicNameOf(model);
  return anthropic === undefined ? undefined : exactOrUndated(table, anthropic);
}

/** The price of `model`: from `prices` (the host's or config.toml's) first, else the built-in table. */
export const priceOf = (model: string, prices: PriceTable = {}): ModelPrice | undefined =>
  priceIn(prices, model) ?? priceIn(BUILT_IN_PRICES, model);

/** What one call cost in USD at `price`, or `null` when the price cannot tell (never a guess). */
export function callCost(usage: LlmUsage, price: ModelPrice | undefined): number | null {
  if (!price) return null;
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  if (cached > 0 && price.cachedInput === undefined) return null;
  if (written > 0 && price.cacheWrite === undefined) return null;
  if (price.maxInputTokens !== undefined && usage.inputTokens > price.maxInputTokens) return null;
  const fresh = Math.max(0, usage.inputTokens - cached - written);
  const perMillion =
    fresh * price.input +
    cached * (price.cachedInput ?? 0) +
    written * (price.cacheWrite ?? 0) +
    usage.outputTokens * price.output;
  // Kept to a billionth of a dollar, as the run's sum is (float products drift: 3 × 0.1).
  return Math.round(perMillion * 1e3) / 1e9;
}
