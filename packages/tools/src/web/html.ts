import type { DefaultTreeAdapterTypes as Parse5 } from 'parse5';
import { type PageReadLimits, readPageOffThread } from './pageReading.js';
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

/**
 * Depth past which elements are unwrapped: their text and empty elements (images, line breaks)
 * are kept in order, their tags are not. Readability's work grows with the square of the depth
 * (1,000 nested <div>s took it minutes), and serializing is recursive; real pages stay far
 * shallower.
 */
export const MAX_DEPTH = 48;

type Parent = Parse5.ParentNode;

const childrenOf = (node: Parse5.Node): Parse5.ChildNode[] | undefined =>
  'content' in node ? node.content.childNodes : 'childNodes' in node ? node.childNodes : undefined;

/** Unwraps what lies deeper than {@link MAX_DEPTH} (no recursion: the page may be a million deep). */
function flattenDeep(document: Parse5.Document): void {
  const stack: [Parent, number][] = [[document, 0]];
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [node, depth] = entry;
    const parent = 'content' in node ? node.content : node;
    if (depth < MAX_DEPTH) {
      for (const child of parent.childNodes) if ('childNodes' in child) stack.push([child, depth + 1]);
      continue;
    }
    const kept: Parse5.ChildNode[] = [];
    const pending = [...parent.childNodes].reverse();
    for (let next = pending.pop(); next; next = pending.pop()) {
      const inner = childrenOf(next);
      if (inner && inner.length > 0) {
        for (let i = inner.length - 1; i >= 0; i--) pending.push(inner[i] as Parse5.ChildNode);
        continue;
      }
      next.parentNode = parent;
      kept.push(next);
    }
    parent.childNodes = kept;
  }
}

let parser: Promise<(html: string) => HtmlDocument> | undefined;
/** The parsers load with the first page, not with the package. */
const loadParser = () => {
  parser ??= Promise.all([import('linkedom'), import('parse5')]).then(([{ DOMParser }, { parse, serialize }]) => {
    return (html: string) => {
      const tree = parse(html);
      flattenDeep(tree);
      return new DOMParser().parseFromString(serialize(tree), 'text/html') as unknown as HtmlDocument;
    };
  });
  return parser;
};

/**
 * A DOM of the page as a browser builds it, no deeper than {@link MAX_DEPTH}. linkedom's own
 * parser drops what sits outside an explicit <html>/<body> and does not close elements as HTML
 * does (pages omit those tags all the time), so parse5 — the HTML standard's parsing algorithm —
 * rebuilds the markup first.
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

/** {@link pageText} of an HTML page, read in a worker thread within the limits (default 30 s). */
export const readablePageText = (html: string, limits: PageReadLimits = {}): Promise<string> =>
  readPageOffThread({ kind: 'text', html }, limits);

/** The text of an HTML fragment (a snippet with <strong> and entities, as search APIs give them). */
export const fragmentText = async (html: string): Promise<string> => textOf((await parseHtml(html)).body);
