import { err, ok, type Result, type ToolScope } from '@openmanus/core';
import { createChatCompletion, readableMarkdown } from '@openmanus/tools';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { chunkAt } from './chunk.js';
import { PAGE_CONTENT_NOTE, pageContent } from './pageContent.js';
import { shown } from './shown.js';

/** The function the extraction model must call, with what it found. */
export const EXTRACTION_FUNCTION = 'extract_content';

const extraction = z.object({
  extracted_content: z.string().describe('What the page says about the goal; say so plainly when it says nothing.'),
});

const SYSTEM_PROMPT =
  'You extract information from a web page for an agent. Answer from the page content only, as briefly as the ' +
  `goal allows, keeping names, numbers and dates exact. ${PAGE_CONTENT_NOTE}`;

/**
 * Characters of the page's HTML that are parsed at most: a page of 50 MB would otherwise be parsed
 * whole, for a minute, holding up every run of the process.
 */
export const MAX_PAGE_HTML = 1_000_000;

/** The page's HTML as it is now, cut in the page at `max` characters, and how long it is. */
const pageHtml = (page: Page, max: number) =>
  page.evaluate((cap) => {
    const html = (globalThis as unknown as { document: { documentElement: { outerHTML: string } } }).document
      .documentElement.outerHTML;
    return { html: html.slice(0, cap), total: html.length };
  }, max);

/**
 * extract_content: the page's main content as Markdown (not its HTML), a chunk of at most
 * `maxChars` from `start`, and one call of the run's model that must answer through the
 * extraction function. The result says where the next chunk starts when the page goes on.
 */
export async function extractContent(
  page: Page,
  goal: string,
  start: number,
  maxChars: number,
  scope: ToolScope,
): Promise<Result<string, string>> {
  // A URL can be as long as the page makes it (a fragment of a megabyte).
  const url = shown(page.url(), 300);
  const { html, total } = await pageHtml(page, MAX_PAGE_HTML);
  const { title, markdown } = await readableMarkdown(html, page.url());
  const cut =
    total > html.length ? ` (only the first ${html.length} of the page's ${total} characters of HTML were read)` : '';
  if (!markdown.trim()) return err(`${url} has no readable text to extract from.`);
  const chunk = chunkAt(markdown, start, maxChars);
  if ('error' in chunk) return err(chunk.error);
  const span = `characters ${chunk.start}–${chunk.end} of ${chunk.total}`;
  const answer = await createChatCompletion({
    // The run's port: the shell counts its calls in the run's usage.
    llm: scope.llm,
    schema: extraction,
    name: EXTRACTION_FUNCTION,
    description: 'Give what you extracted from the page.',
    maxAttempts: 1,
    signal: scope.signal,
    system: SYSTEM_PROMPT,
    prompt: `Goal: ${goal}\n\n${pageContent(`Page: ${title || '(untitled)'} — ${url} (${span})\n\n${chunk.text}`)}`,
  });
  if (!answer.isOk()) return err(`extract_content could not extract: ${answer.error.message}`);
  const more = chunk.more
    ? `\n[The page goes on: extract_content with start_from_char=${chunk.end} reads the next part.]`
    : '';
  // The answer retells the page: it stays marked as the page's words.
  return ok(`Extracted from ${url} (${span}${cut}):\n${pageContent(answer.value.extracted_content)}${more}`);
}
