// A JSON value as a collapsible tree (details/summary, text only), and a state diff as a list.

import { el, h } from './dom.js';

const kindOf = (value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

function leaf(value) {
  const kind = kindOf(value);
  const text = kind === 'string' ? JSON.stringify(value) : kind === 'undefined' ? 'undefined' : String(value);
  return el('span', text, `json-${kind}`);
}

const sizeText = (value) =>
  Array.isArray(value)
    ? `[${value.length}]`
    : `{${Object.keys(value).length}${Object.keys(value).length === 1 ? ' key' : ' keys'}}`;

/**
 * `value` as nested `<details>`: objects and arrays collapse, the first `openDepth` levels open.
 * Each node carries its path (`messages[2].content`) in `data-path`.
 */
export function jsonTree(value, { openDepth = 1, path = '' } = {}) {
  return node(undefined, value, 0, openDepth, path);
}

function node(key, value, depth, openDepth, path) {
  const label = key === undefined ? undefined : el('span', typeof key === 'number' ? `${key}` : key, 'json-key');
  const kind = kindOf(value);
  if (kind !== 'object' && kind !== 'array') {
    const line = h('div', 'json-leaf', label, label ? ': ' : undefined, leaf(value));
    line.dataset.path = path;
    return line;
  }
  const details = el('details', undefined, 'json-node');
  details.dataset.path = path;
  details.open = depth < openDepth;
  const summary = h('summary', undefined, label, label ? ': ' : undefined, el('span', sizeText(value), 'json-size'));
  details.append(summary);
  // Children are built when first opened: a long run's state has thousands of nodes.
  const fill = () => {
    if (details.dataset.filled) return;
    details.dataset.filled = 'yes';
    const children = el('div', undefined, 'json-children');
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    for (const [childKey, childValue] of entries) {
      const childPath =
        typeof childKey === 'number' ? `${path}[${childKey}]` : path ? `${path}.${childKey}` : String(childKey);
      children.append(node(childKey, childValue, depth + 1, openDepth, childPath));
    }
    if (entries.length === 0) children.append(el('span', Array.isArray(value) ? 'empty list' : 'no keys', 'muted'));
    details.append(children);
  };
  if (details.open) fill();
  details.addEventListener('toggle', () => details.open && fill());
  return details;
}

const shown = (value) => (value === undefined ? '(none)' : JSON.stringify(value, null, 2));

/**
 * The changes between two states: each path with what it was and what it became; headed by
 * `summary`, by default what the diff is from and to.
 */
export function diffList(
  diff,
  summary = `${diff.changes.length} ${diff.changes.length === 1 ? 'change' : 'changes'} from transition ${diff.from} to ${diff.to}${diff.truncated ? ' (more not shown)' : ''}`,
) {
  const box = el('div', undefined, 'diff');
  box.append(el('p', summary, 'muted diff-summary'));
  const list = el('ol', undefined, 'changes-list');
  for (const change of diff.changes) {
    const item = el('li', undefined, 'change');
    item.dataset.path = change.path;
    const kind = !('before' in change) ? 'added' : !('after' in change) ? 'removed' : 'changed';
    item.dataset.kind = kind;
    item.append(h('div', 'change-head', el('code', change.path, 'change-path'), el('span', kind, `badge ${kind}`)));
    if (kind !== 'added') item.append(el('pre', shown(change.before), 'before'));
    if (kind !== 'removed') item.append(el('pre', shown(change.after), 'after'));
    list.append(item);
  }
  box.append(list);
  return box;
}
