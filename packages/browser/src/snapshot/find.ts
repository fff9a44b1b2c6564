import { RE2JS } from 're2js';
import { pageContent } from '../pageContent.js';
import { shown } from '../shown.js';

/** What to look for: text (any case), or a regular expression. */
export interface FindQuery {
  readonly text: string;
  readonly regex?: boolean;
}

const MAX_MATCHES = 30;
const MAX_LINE = 200;

const refOf = (line: string) => /\[ref=((?:f\d+)?e\d+)\]/.exec(line)?.[1];
const indentOf = (line: string) => line.length - line.trimStart().length;

/** The matcher for the query, or why it is not one. */
export function matcherFor(query: FindQuery): ((line: string) => boolean) | { error: string } {
  if (query.text === '') return { error: 'find needs a non-empty text to look for' };
  if (!query.regex) {
    const needle = query.text.toLowerCase();
    return (line) => line.toLowerCase().includes(needle);
  }
  // The model writes the pattern: RE2 matches in time linear in the line, so no pattern (such as
  // `(a|a)*$`) can backtrack for seconds and hold up the process; it has no lookaround or backreferences.
  try {
    const pattern = RE2JS.compile(query.text, RE2JS.CASE_INSENSITIVE);
    return (line) => pattern.test(line);
  } catch (error) {
    return {
      error: `not a valid regular expression: ${(error as Error).message} (find uses RE2 syntax: no lookaround or backreferences)`,
    };
  }
}

/**
 * Searches the page's whole AI snapshot (every element and text, not only what the page state
 * shows) and lists the matching lines; a line without a ref of its own (a text, a link's URL) names
 * the element it is in. No model is asked.
 */
export function findInSnapshot(snapshot: string, query: FindQuery): string {
  const matches = matcherFor(query);
  if (typeof matches !== 'function') return `find: ${matches.error}`;
  const lines = snapshot.split('\n');
  const found: string[] = [];
  let total = 0;
  lines.forEach((line, index) => {
    const content = line
      .trim()
      .replace(/^- /, '')
      .replace(/ \[cursor=pointer\]/g, '');
    if (!content || !matches(content)) return;
    total++;
    if (found.length >= MAX_MATCHES) return;
    let where = '';
    if (refOf(line) === undefined) {
      // The nearest enclosing element with a ref: a line above, less indented.
      let indent = indentOf(line);
      for (let i = index - 1; i >= 0; i--) {
        const above = lines[i] ?? '';
        if (indentOf(above) >= indent) continue;
        indent = indentOf(above);
        const ref = refOf(above);
        if (ref) {
          where = ` (in [ref=${ref}])`;
          break;
        }
      }
    }
    found.push(`- ${shown(content, MAX_LINE)}${where}`);
  });
  const label = `${query.regex ? 'the pattern' : 'the text'} ${JSON.stringify(query.text)}`;
  if (total === 0) return `Nothing on the page matches ${label}.`;
  const more = total > found.length ? ` (the first ${found.length} shown; narrow the search for the rest)` : '';
  return `${total} line${total === 1 ? '' : 's'} on the page match ${label}${more}:\n${pageContent(found.join('\n'))}`;
}
