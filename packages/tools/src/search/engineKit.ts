import type { HttpPage } from '../web/http.js';
import type { EngineHit } from './types.js';

/** `base` + `path` + the parameters that have a value; a base with a path of its own (a proxy) keeps it. */
export function endpoint(base: string, path: string, params: Record<string, string | number | undefined>): string {
  const url = new URL(base.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
  }
  return url.href;
}

/** The page when the engine answered 2xx; otherwise an Error naming the status. */
export function ensureOk(page: HttpPage, engine: string): HttpPage {
  if (page.status >= 200 && page.status < 300) return page;
  throw new Error(`${engine} answered HTTP ${page.status}${page.statusText ? ` ${page.statusText}` : ''}`);
}

/** The JSON body of an API's answer, or an Error saying it was something else. */
export function jsonOf(page: HttpPage, engine: string): unknown {
  try {
    return JSON.parse(page.text);
  } catch {
    throw new Error(`${engine} answered with ${page.mediaType || 'a body'} that is not JSON`);
  }
}

/** `zh-CN` → `zh`. */
export const primaryLanguage = (lang: string): string => (lang.split('-')[0] ?? lang).toLowerCase();

/**
 * Result pages of `pageSize` from offset 0 until there are `numResults` hits, a page brings no new
 * one, or a later page fails (what the earlier pages found is still an answer).
 */
export async function collectPages(
  numResults: number,
  pageSize: number,
  fetchPage: (offset: number) => Promise<readonly EngineHit[]>,
): Promise<EngineHit[]> {
  const hits: EngineHit[] = [];
  const seen = new Set<string>();
  for (let offset = 0; hits.length < numResults; offset += pageSize) {
    let page: readonly EngineHit[];
    try {
      page = await fetchPage(offset);
    } catch (error) {
      if (offset === 0) throw error;
      break;
    }
    const fresh = page.filter((hit) => hit.url !== undefined && !seen.has(hit.url));
    if (fresh.length === 0) break;
    for (const hit of fresh) {
      seen.add(hit.url ?? '');
      hits.push(hit);
    }
  }
  return hits;
}
