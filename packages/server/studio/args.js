// A tool call's arguments shown for what they are: code highlighted, file paths and URLs marked,
// the rest as JSON. The arguments are the model's text: parsed here, shown as text.

import { el, h, urlLink } from './dom.js';
import { highlight, languageOf } from './highlight.js';
import { jsonTree } from './tree.js';

const URL_TEXT = /^https?:\/\/\S+$/i;
const CODE_KEYS = /^(code|source|script|command|cmd|program|snippet|query|sql|patch|diff)$/i;
const PATH_KEYS = /(^|_)(path|file|filename|file_path|dir|directory|cwd|workspace)$/i;
const looksLikePath = (text) => /^(~|\.{1,2})?\/[^\s]*$/.test(text) || /^[\w.-]+\/[\w./-]+$/.test(text);

function valueView(tool, key, value) {
  if (typeof value === 'string') {
    if (URL_TEXT.test(value.trim())) return urlLink(value.trim());
    if (PATH_KEYS.test(key) || (!value.includes('\n') && value.length < 300 && looksLikePath(value)))
      return el('code', value, 'path');
    const language = CODE_KEYS.test(key) ? (languageOf(tool, key, value) ?? 'plain') : undefined;
    if (language) return highlight(value, language === 'plain' ? undefined : language);
    if (value.includes('\n')) return el('pre', value, 'text');
    return el('span', value, 'text');
  }
  if (value !== null && typeof value === 'object') return jsonTree(value, { openDepth: 2 });
  return el('span', JSON.stringify(value), `json-${value === null ? 'null' : typeof value}`);
}

/** The arguments as a list of `key: value` rows, or the raw text when they are not a JSON object. */
export function argumentsView(tool, args) {
  let parsed;
  try {
    parsed = JSON.parse(args);
  } catch {
    return h('div', 'args', el('p', 'not valid JSON, as the model wrote it:', 'muted'), el('pre', args, 'raw'));
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return h('div', 'args', valueView(tool, '', parsed));
  const list = el('dl', undefined, 'args');
  for (const [key, value] of Object.entries(parsed)) {
    const row = h('div', 'arg', el('dt', key), h('dd', undefined, valueView(tool, key, value)));
    row.dataset.key = key;
    list.append(row);
  }
  if (list.children.length === 0) list.append(el('span', 'no arguments', 'muted'));
  return list;
}
