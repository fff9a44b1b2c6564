import type TurndownService from 'turndown';
import { type HtmlDocument, parseHtml, selectAll } from './html.js';
import { type PageReadLimits, readPageOffThread } from './pageReading.js';
import { collapseWhitespace } from './text.js';

export interface ReadablePage {
  readonly title: string;
  readonly markdown: string;
}

interface Converters {
  readonly readability: typeof import('@mozilla/readability').Readability;
  readonly turndown: TurndownService;
}

let converters: Promise<Converters> | undefined;
/** Readability and Turndown load with the first page, not with the package. */
const loadConverters = () => {
  converters ??= Promise.all([import('@mozilla/readability'), import('turndown')]).then(
    ([{ Readability }, { default: Turndown }]) => {
      const turndown = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
      turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object']);
      return { readability: Readability, turndown };
    },
  );
  return converters;
};

/**
 * The main content of an HTML page as Markdown, with its title: Readability (Firefox's reader
 * view) picks the article. Links are made absolute; links and images that are not http(s)
 * (javascript:, data:) are dropped. Read in a worker thread within the limits (default 30 s):
 * rejects when they are reached.
 */
export const readableMarkdown = (html: string, pageUrl: string, limits: PageReadLimits = {}): Promise<ReadablePage> =>
  readPageOffThread({ kind: 'markdown', html, url: pageUrl }, limits);

/** {@link readableMarkdown} in this thread: the page worker's job. */
export async function pageMarkdown(html: string, pageUrl: string): Promise<ReadablePage> {
  const { readability: Readability, turndown } = await loadConverters();
  const document = await parseHtml(html);
  absoluteLinks(document, pageUrl);
  const pageTitle = collapseWhitespace(document.title);
  // No article only when the page has no text at all.
  const article = new Readability(document as never).parse();
  const content = article?.content ?? '';
  const markdown = turndown
    .turndown(content)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title: collapseWhitespace(article?.title ?? '') || pageTitle, markdown };
}

function absoluteLinks(document: HtmlDocument, pageUrl: string): void {
  const base = resolve(document.querySelector('base[href]')?.getAttribute('href') ?? '', pageUrl) ?? new URL(pageUrl);
  for (const link of selectAll(document, 'a[href]')) {
    const url = resolve(link.getAttribute('href') ?? '', base.href);
    if (url && ['http:', 'https:', 'mailto:'].includes(url.protocol)) link.setAttribute('href', url.href);
    else link.removeAttribute('href');
  }
  for (const image of selectAll(document, 'img')) {
    const src = image.getAttribute('src');
    const url = src ? resolve(src, base.href) : undefined;
    if (url && (url.protocol === 'http:' || url.protocol === 'https:')) image.setAttribute('src', url.href);
    else image.remove();
  }
}

function resolve(href: string, base: string): URL | undefined {
  try {
    return new URL(href, base);
  } catch {
    return undefined;
  }
}
