/**
 * A node of Playwright's AI snapshot as `page.ariaSnapshotJSON({ mode: 'ai', boxes: true })`
 * gives it: the accessibility tree of the page, iframes (same- and cross-origin) and open shadow
 * roots included, each element with a `ref` that `page.locator('aria-ref=' + ref)` resolves.
 */
export interface AriaNode {
  readonly role: string;
  readonly name?: string;
  readonly ref?: string;
  /** Relative to the viewport of the node's own frame, in CSS pixels. */
  readonly box?: AriaBox;
  /** The text of an element whose only child is text, or of a text fragment. */
  readonly text?: string;
  readonly children?: readonly (AriaNode | string)[];
  readonly checked?: boolean | 'mixed';
  readonly disabled?: boolean;
  readonly expanded?: boolean;
  readonly pressed?: boolean | 'mixed';
  readonly selected?: boolean;
  readonly invalid?: boolean | string;
  readonly level?: number;
  readonly url?: string;
  readonly placeholder?: string;
  readonly cursor?: string;
}

export interface AriaBox {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The snapshot's top-level nodes, whatever shape the value came in (a list, or one node). */
export function ariaNodes(snapshot: unknown): AriaNode[] {
  const list = Array.isArray(snapshot) ? snapshot : [snapshot];
  return list.filter(isAriaNode);
}

export const isAriaNode = (value: unknown): value is AriaNode =>
  typeof value === 'object' && value !== null && typeof (value as { role?: unknown }).role === 'string';
