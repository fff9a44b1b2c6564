import { collapseWhitespace } from './text.js';

/** The part of the DOM this package uses (linkedom implements it; its own typings are loose). */
export interface HtmlNode {
  readonly nodeType: number;
  readonly textContent: string | null;
  readonly childNodes: ArrayLike<HtmlNode>;
}

export interface HtmlElement extends HtmlNode {
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  querySelector(selector: string): HtmlElement | null;
  querySelectorAll(selector: string): ArrayLike<HtmlElement>;
  remove(): void;
}

export interface HtmlDocument extends HtmlElement {
  readonly title: string;
  readonly body: HtmlElement | null;
  readonly documentElement: HtmlElement;
}

let parser: Promise<(html: string) => HtmlDocument> | undefined;
/** The parsers load with the first page, not with the package. */
const loadParser = () => {
  parser ??= Promise.all([import('linkedom'), import('parse5')]).then(
    ([{ DOMParser }, { parse, serialize }]) =>
      (html: string) =>
        new DOMParser().parseFromString(serialize(parse(html)), 'text/html') as unknown as HtmlDocument,
  );
  return parser;
};

/**
 * A DOM of the page as a browser builds it. linkedom's own parser drops what sits outside an
 * explicit <html>/<body> and does not close elements as HTML does (pages omit those tags all the
 * time), so parse5 — the HTML standard's parsing algorithm — rebuilds the markup first.
 */
export async function parseHtml(html: string): Promise<HtmlDocument> {
  return (await loadParser())(html);
}

export const selectAll = (root: HtmlElement, selector: string): HtmlElement[] =>
  Array.from(root.querySelectorAll(selector));

/** An element's text with whitespace collapsed ('' for none). */
export const textOf = (element: HtmlElement | null | undefined): string =>
  collapseWhitespace(element?.textContent ?? '');

const BOILERPLATE = 'script, style, noscript, template, nav, header, footer, svg, iframe, object';

/**
 * The readable text of a page: scripts, styles, navigation, headers and footers removed, text
 * pieces separated by a space (so "<h1>A</h1><p>B" is "A B", not "AB"), whitespace collapsed.
 */
export function pageText(document: HtmlDocument): string {
  for (const element of selectAll(document, BOILERPLATE)) element.remove();
  const pieces: string[] = [];
  const walk = (node: HtmlNode) => {
    if (node.nodeType === TEXT_NODE) pieces.push(node.textContent ?? '');
    else for (const child of Array.from(node.childNodes)) walk(child);
  };
  walk(document.body ?? document.documentElement);
  return collapseWhitespace(pieces.join(' '));
}

const TEXT_NODE = 3;

/** The text of an HTML fragment (a snippet with <strong> and entities, as search APIs give them). */
export const fragmentText = async (html: string): Promise<string> => textOf((await parseHtml(html)).body);
