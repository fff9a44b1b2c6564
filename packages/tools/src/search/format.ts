import { collapseWhitespace } from '../web/text.js';
import type { EngineFailure, SearchResult } from './types.js';

/** What a search found, for hosts (and the browser's web_search action) to use as data. */
export interface SearchResponse {
  readonly query: string;
  readonly results: readonly SearchResult[];
  /** The engine that gave the results. */
  readonly engine: string;
  /** The engines that failed before it, and why. */
  readonly failures: readonly EngineFailure[];
  readonly lang: string;
  readonly country: string;
}

/** Characters of a page's text shown per result (the structured response keeps more). */
const CONTENT_PREVIEW = 1000;

/** The response as the model reads it (OpenManus's layout). */
export function formatSearchResponse(response: SearchResponse): string {
  const lines = [`Search results for '${response.query}':`];
  response.results.forEach((result, index) => {
    lines.push('', `${index + 1}. ${result.title}`, `   URL: ${result.url}`);
    if (result.description) lines.push(`   Description: ${result.description}`);
    if (result.content) lines.push(`   Content: ${preview(result.content)}`);
    if (result.contentRefused) lines.push(`   Content: not fetched, ${result.contentRefused}`);
  });
  lines.push(
    '',
    'Metadata:',
    `- Total results: ${response.results.length}`,
    `- Language: ${response.lang}`,
    `- Country: ${response.country}`,
    `- Engine: ${response.engine}`,
  );
  if (response.failures.length > 0) {
    lines.push(`- Failed first: ${response.failures.map((f) => `${f.engine} (${f.reason})`).join('; ')}`);
  }
  return lines.join('\n');
}

const preview = (content: string) =>
  content.length > CONTENT_PREVIEW
    ? `${collapseWhitespace(content.slice(0, CONTENT_PREVIEW))}...`
    : collapseWhitespace(content);

/** Each engine's last failure, one a line. */
export function describeFailures(failures: readonly EngineFailure[]): string {
  const last = new Map<string, EngineFailure>();
  for (const failure of failures) last.set(failure.engine, failure);
  return [...last.values()].map((f) => `- ${f.engine}: ${f.reason}`).join('\n');
}
