import { setTimeout as sleep } from 'node:timers/promises';
import { err, messageOf, ok, type Result } from '@openmanus/core';
import { linkAbort } from '@openmanus/core/internal';
import { isHttpUrl } from '../web/http.js';
import { collapseWhitespace } from '../web/text.js';
import type { EngineFailure, EngineFetch, EngineHit, SearchEngine, SearchResult } from './types.js';

/**
 * The order engines are tried in: the preferred one, then the fallbacks, then the rest of the
 * available ones (in their own order), each once. Names are compared lowercased.
 */
export function engineOrder(preferred: string, fallbacks: readonly string[], available: readonly string[]): string[] {
  const order = [preferred, ...fallbacks, ...available].map((name) => name.toLowerCase());
  return [...new Set(order)].filter((name) => available.includes(name));
}

export interface CascadeSettings {
  /** In the order they are tried. */
  readonly engines: readonly SearchEngine[];
  readonly engineTimeoutMs: number;
  readonly retryDelayMs: number;
  /** Rounds after the first, each after `retryDelayMs`. */
  readonly maxRetries: number;
  /** HTTP for one engine call, bound to that call's signal. */
  readonly fetchFor: (signal: AbortSignal) => EngineFetch;
}

export interface CascadeQuery {
  readonly query: string;
  readonly numResults: number;
  readonly lang: string;
  readonly country: string;
  readonly signal: AbortSignal;
}

export interface CascadeAnswer {
  readonly engine: string;
  readonly results: readonly SearchResult[];
  /** The engines that failed before it, in every round. */
  readonly failures: readonly EngineFailure[];
}

export interface CascadeFailure {
  readonly failures: readonly EngineFailure[];
  readonly rounds: number;
  readonly cancelled: boolean;
}

/**
 * Tries each engine in turn until one gives results; one that throws, times out or finds nothing
 * is recorded and the next is tried. When all fail, waits `retryDelayMs` (cancellable) and tries
 * them all again, `maxRetries` times.
 */
export async function runCascade(
  settings: CascadeSettings,
  query: CascadeQuery,
): Promise<Result<CascadeAnswer, CascadeFailure>> {
  const failures: EngineFailure[] = [];
  const rounds = settings.maxRetries + 1;
  const cancelled = () => err({ failures, rounds, cancelled: true });
  for (let round = 1; round <= rounds; round++) {
    for (const engine of settings.engines) {
      if (query.signal.aborted) return cancelled();
      const attempt = await tryEngine(engine, settings, query);
      if (attempt.isOk()) return ok({ engine: engine.name, results: attempt.value, failures });
      if (query.signal.aborted) return cancelled();
      failures.push({ engine: engine.name, reason: attempt.error, round });
    }
    if (round < rounds) {
      try {
        await sleep(settings.retryDelayMs, undefined, { signal: query.signal });
      } catch {
        return cancelled();
      }
    }
  }
  return err({ failures, rounds, cancelled: false });
}

/** One engine under its own time limit; an engine that ignores its signal is still left behind when time is up. */
async function tryEngine(
  engine: SearchEngine,
  settings: CascadeSettings,
  query: CascadeQuery,
): Promise<Result<SearchResult[], string>> {
  const link = linkAbort(query.signal, settings.engineTimeoutMs);
  const timedOut = () => `timed out after ${settings.engineTimeoutMs / 1000} s`;
  try {
    const { signal } = link;
    const hits = await Promise.race([
      engine.search(query.query, {
        numResults: query.numResults,
        lang: query.lang,
        country: query.country,
        signal,
        fetch: settings.fetchFor(signal),
      }),
      link.stopped.then(() => undefined),
    ]);
    if (link.timedOut()) return err(timedOut());
    if (query.signal.aborted) return err('cancelled');
    if (!Array.isArray(hits)) return err('the engine gave no list of results');
    const results = toSearchResults(hits, query.numResults);
    return results.length > 0 ? ok(results) : err('no results');
  } catch (error) {
    if (link.timedOut()) return err(timedOut());
    return err(messageOf(error));
  } finally {
    link.dispose();
  }
}

/**
 * What an engine found, in one shape: results without an http(s) URL are dropped, as are
 * repeats; a missing title becomes `Result {i}`; at most `max`.
 */
export function toSearchResults(hits: readonly EngineHit[], max: number): SearchResult[] {
  const results: SearchResult[] = [];
  const seen = new Set<string>();
  for (const hit of hits) {
    const url = httpUrlOf(hit.url);
    if (!url || seen.has(url)) continue;
    seen.add(url);
    const title = collapseWhitespace(hit.title ?? '') || `Result ${results.length + 1}`;
    const description = collapseWhitespace(hit.description ?? '');
    results.push({ title, url, ...(description ? { description } : {}) });
    if (results.length === max) break;
  }
  return results;
}

function httpUrlOf(text: string | undefined): string | undefined {
  if (!text) return undefined;
  try {
    const url = new URL(text.trim());
    return isHttpUrl(url) ? url.href : undefined;
  } catch {
    return undefined;
  }
}
