import { Readability } from '@mozilla/readability';
import TurndownService from 'turndown';
import { type HtmlDocument, parseHtml, removeBoilerplate, selectAll } from './html.js';
import { collapseWhitespace } from './text.js';

export interface ReadablePage {
  readonly title: string;
  readonly markdown: string;
}

let converter: TurndownService | undefined;
const turndown = () => {
  if (!converter) {
    converter = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
    converter.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object']);
  }
  return converter;
};

/**
 * The main content of an HTML page as Markdown, with its title: Readability (Firefox's reader
 * view) picks the article; a page it finds no article in gives its body without boilerplate.
 * Links are made absolute; links and images that are not http(s) (javascript:, data:) are dropped.
 */
export function readableMarkdown(html: string, pageUrl: string): ReadablePage {
  const document = parseHtml(html);
  absoluteLinks(document, pageUrl);
  const pageTitle = collapseWhitespace(document.title);
  // Readability rearranges the document it reads: the fallback starts from a fresh copy.
  const article = new Readability(document as never).parse();
  let content = article?.content;
  if (!content) {
    const fresh = parseHtml(html);
    absoluteLinks(fresh, pageUrl);
    removeBoilerplate(fresh);
    content = (fresh.body ?? fresh.documentElement).innerHTML;
  }
  const markdown = turndown()
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
