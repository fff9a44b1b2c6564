import { indented } from './compact.js';
import type { PageElement } from './elements.js';

/** An element that is new since the last state, or whose line changed (checked, typed in, expanded). */
export interface ElementChange {
  readonly element: PageElement;
  readonly change: 'new' | 'changed';
}

/** What changed in a page's elements between two states of the same document, in page order. */
export interface ElementChanges {
  readonly changes: readonly ElementChange[];
  /** How many elements are gone. */
  readonly removed: number;
}

export function diffElements(before: readonly PageElement[], after: readonly PageElement[]): ElementChanges {
  const earlier = new Map(before.map((element) => [element.ref, element.line]));
  const now = new Set(after.map((element) => element.ref));
  const changes: ElementChange[] = [];
  for (const element of after) {
    const line = earlier.get(element.ref);
    if (line === undefined) changes.push({ element, change: 'new' });
    else if (line !== element.line) changes.push({ element, change: 'changed' });
  }
  return { changes, removed: before.filter((element) => !now.has(element.ref)).length };
}

export const unchanged = (diff: ElementChanges): boolean => diff.changes.length === 0 && diff.removed === 0;

/** The changes as the model reads them: new elements marked `*`, changed ones `~`, cut at `maxChars`. */
export function describeChanges(diff: ElementChanges, maxChars: number): string {
  if (unchanged(diff)) return "No change in the page's elements.";
  const lines: string[] = [];
  let size = 0;
  for (const { element, change } of diff.changes) {
    const line = indented({ ...element, depth: 0 }, change === 'new' ? '*' : '~');
    if (size + line.length + 1 > maxChars) break;
    lines.push(line);
    size += line.length + 1;
  }
  const count = (change: ElementChange['change']) => diff.changes.filter((c) => c.change === change).length;
  const summary = [
    count('new') > 0 ? `${count('new')} new (*)` : '',
    count('changed') > 0 ? `${count('changed')} changed (~)` : '',
    diff.removed > 0 ? `${diff.removed} gone` : '',
  ].filter(Boolean);
  const left = diff.changes.length - lines.length;
  return [
    `Changes in the page's elements: ${summary.join(', ')}${lines.length > 0 ? ':' : '.'}`,
    ...lines,
    ...(left > 0 ? [`[${left} more changes not shown; get_current_state shows the page]`] : []),
  ].join('\n');
}
