import type { PageElement } from './elements.js';

export interface CompactLimits {
  /** The viewport's height in CSS pixels: elements within half a screen of it are shown. */
  readonly viewportHeight: number;
  /** Characters of element lines at most; the rest is counted, not shown. */
  readonly maxChars: number;
}

/** An element's line as the model reads it, indented by its nesting. */
export const indented = (element: PageElement, bullet = '-'): string =>
  `${'  '.repeat(element.depth)}${bullet} ${element.line}`;

type Place = 'above' | 'near' | 'below';

/** Where an element lies relative to the viewport ± half a screen (unknown boxes count as near). */
function placeOf(element: PageElement, viewportHeight: number): Place {
  const margin = viewportHeight / 2;
  if (element.bottom !== undefined && element.bottom < -margin) return 'above';
  if (element.top !== undefined && element.top > viewportHeight + margin) return 'below';
  return 'near';
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/**
 * The elements section of the page state: the elements near the viewport (within half a screen
 * above and below it), each inside the elements it is nested in, cut at `maxChars`; then how many
 * interactive elements are above, below or cut, and how to get at them.
 */
export function compactElements(elements: readonly PageElement[], limits: CompactLimits): string {
  const shown = new Set<string>();
  const lines: string[] = [];
  let size = 0;
  let cut = 0;
  const counts = { above: 0, below: 0 };
  for (const element of elements) {
    if (element.content) continue;
    const place = placeOf(element, limits.viewportHeight);
    const parent = element.parents.at(-1);
    // An element whose container is not shown is not shown either: it would hang loose.
    if (place !== 'near' || (parent !== undefined && !shown.has(parent))) {
      if (element.interactive && place !== 'near') counts[place]++;
      else if (element.interactive) cut++;
      continue;
    }
    const line = indented(element);
    if (size + line.length + 1 > limits.maxChars) {
      if (element.interactive) cut++;
      continue;
    }
    shown.add(element.ref);
    lines.push(line);
    size += line.length + 1;
  }
  const interactive = elements.filter((element) => element.interactive).length;
  const visible = elements.filter((element) => element.interactive && shown.has(element.ref)).length;
  const notes: string[] = [];
  if (counts.above > 0) notes.push(`[${plural(counts.above, 'more interactive element')} above; scroll_up]`);
  if (counts.below > 0) {
    notes.push(`[${plural(counts.below, 'more interactive element')} below the fold; scroll_down or find("text")]`);
  }
  if (cut > 0) {
    notes.push(
      `[${plural(cut, 'more interactive element')} near here not shown (the state is capped); find("text") finds them]`,
    );
  }
  const heading =
    interactive === 0 && lines.length === 0
      ? 'Elements: none (no links, buttons or fields on this page)'
      : `Elements (viewport ±½ screen; ${visible} of ${interactive} interactive shown):`;
  return [heading, ...lines, ...notes].join('\n');
}
