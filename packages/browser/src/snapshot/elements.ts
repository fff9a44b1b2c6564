import { escapeInvisible, shown } from '../shown.js';
import { type AriaNode, isAriaNode } from './ariaNode.js';

/** An element of the page the model is shown: something to act on, or a landmark to read by. */
export interface PageElement {
  readonly ref: string;
  /** Nesting among shown elements (an iframe's content, a dialog's buttons, a listbox's options). */
  readonly depth: number;
  /** The refs of the shown elements it sits in, outermost first. */
  readonly parents: readonly string[];
  /** Top and bottom edges in the page's viewport, in CSS pixels (iframe offsets added); undefined when unknown. */
  readonly top?: number;
  readonly bottom?: number;
  /** Something to act on (not a heading, a frame or a container). */
  readonly interactive: boolean;
  /**
   * Text of the page (a paragraph, a status message), not shown in the page state but listed among
   * the changes after an action: what a form said back, what a button loaded.
   */
  readonly content?: boolean;
  /** The line the model reads, e.g. `button "Submit form" [ref=e14]`. */
  readonly line: string;
}

/** Roles shown in the page state: what can be acted on, plus the headings and frames to find one's way by. */
const INTERACTIVE_ROLES = new Set([
  'button',
  'link',
  'textbox',
  'searchbox',
  'combobox',
  'listbox',
  'option',
  'checkbox',
  'radio',
  'switch',
  'slider',
  'spinbutton',
  'tab',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'treeitem',
]);
const LANDMARK_ROLES = new Set(['heading', 'iframe', 'dialog', 'alertdialog', 'alert']);
/** Roles whose text is their message. */
const MESSAGE_ROLES = new Set(['alert', 'dialog', 'alertdialog']);
/** Roles whose value is worth showing (what was typed, the chosen option, the slider's position). */
const VALUE_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider']);

const MAX_NAME = 100;
const MAX_VALUE = 80;
const MAX_TEXT = 200;
const MAX_URL = 200;
/** A select's options are listed inline up to this many, and this many characters. */
const INLINE_OPTIONS = 8;
const INLINE_OPTIONS_CHARS = 160;

// JSON escapes the controls; what it leaves (bidi, zero-width) is escaped after it.
const quote = (text: string, max: number) =>
  escapeInvisible(JSON.stringify(text.length > max ? `${text.slice(0, max - 1)}…` : text.replace(/\s+/g, ' ').trim()));

/** A link target as short as it can be read: a path when it stays on the page's origin. */
function shortUrl(url: string, pageUrl: string): string {
  let short = url;
  try {
    const target = new URL(url, pageUrl);
    short = target.origin === new URL(pageUrl).origin ? target.pathname + target.search + target.hash : target.href;
  } catch {}
  return shown(short, MAX_URL);
}

function flags(node: AriaNode): string {
  const out: string[] = [];
  if (node.level !== undefined) out.push(`[level=${node.level}]`);
  if (node.checked !== undefined && node.checked !== false)
    out.push(node.checked === 'mixed' ? '[checked=mixed]' : '[checked]');
  if (node.pressed !== undefined && node.pressed !== false)
    out.push(node.pressed === 'mixed' ? '[pressed=mixed]' : '[pressed]');
  if (node.selected) out.push('[selected]');
  if (node.expanded !== undefined) out.push(node.expanded ? '[expanded]' : '[collapsed]');
  if (node.disabled) out.push('[disabled]');
  if (node.invalid) out.push('[invalid]');
  return out.join(' ');
}

/** The options of a select (they have no refs), inline when few, else how many and how to list them. */
function inlineOptions(options: readonly AriaNode[]): string {
  const names = options.map((option) => `${quote(option.name ?? '', 40)}${option.selected ? '(selected)' : ''}`);
  const inline = names.join(' | ');
  if (options.length <= INLINE_OPTIONS && inline.length <= INLINE_OPTIONS_CHARS) return `: options ${inline}`;
  const chosen = options.find((option) => option.selected);
  return `: ${options.length} options${chosen ? `, ${quote(chosen.name ?? '', 40)} selected` : ''} (get_dropdown_options lists them)`;
}

const childNodes = (node: AriaNode): AriaNode[] => (node.children ?? []).filter(isAriaNode);

/** Options without refs: those of a native select, which only exist as its list. */
const refless = (children: readonly AriaNode[]) =>
  children.filter((child) => child.role === 'option' && child.ref === undefined);

/** The line for one element (without its nesting). */
export function elementLine(node: AriaNode, ref: string, pageUrl: string): string {
  const parts = [node.role];
  if (node.name) parts.push(quote(node.name, MAX_NAME));
  const flagText = flags(node);
  if (flagText) parts.push(flagText);
  parts.push(`[ref=${ref}]`);
  let line = parts.join(' ');
  if (node.url !== undefined) line += ` → ${shortUrl(node.url, pageUrl)}`;
  if (node.placeholder) line += ` placeholder=${quote(node.placeholder, MAX_VALUE)}`;
  const options = refless(childNodes(node));
  if (options.length > 0) line += inlineOptions(options);
  else if ((VALUE_ROLES.has(node.role) || MESSAGE_ROLES.has(node.role)) && node.text) {
    line += `: ${quote(node.text, MAX_VALUE)}`;
  }
  return line;
}

/**
 * The elements worth showing, in document order: interactive ones, headings, frames, dialogs and
 * alerts, and the page's text (marked `content`, for the changes after an action). Containers
 * without a role of their own are looked through; an iframe's content is nested
 * under it, its boxes moved down by the iframe's position (a frame's boxes are relative to its
 * own viewport).
 */
export function pageElements(snapshot: readonly AriaNode[], pageUrl: string): PageElement[] {
  const out: PageElement[] = [];
  const walk = (nodes: readonly AriaNode[], parents: readonly string[], dy: number) => {
    for (const node of nodes) {
      // Options without a ref (a native select's) are part of their select's line.
      const shown = INTERACTIVE_ROLES.has(node.role) || LANDMARK_ROLES.has(node.role);
      let inner = parents;
      const box = node.box ? { top: node.box.y + dy, bottom: node.box.y + dy + node.box.height } : {};
      if (shown && node.ref !== undefined) {
        out.push({
          ref: node.ref,
          depth: parents.length,
          parents,
          ...box,
          interactive: INTERACTIVE_ROLES.has(node.role),
          line: elementLine(node, node.ref, pageUrl),
        });
        inner = [...parents, node.ref];
      } else if (node.ref !== undefined && node.text) {
        const line = `${node.role === 'generic' ? 'text' : node.role} [ref=${node.ref}]: ${quote(node.text, MAX_TEXT)}`;
        out.push({ ref: node.ref, depth: parents.length, parents, ...box, interactive: false, content: true, line });
      }
      const children = childNodes(node);
      walk(children, inner, node.role === 'iframe' && node.box ? dy + node.box.y : dy);
    }
  };
  walk(snapshot, [], 0);
  return out;
}
