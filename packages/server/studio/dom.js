// Small DOM and formatting helpers. Whatever comes from a run goes in as text (textContent, text
// nodes): a model's words, a tool's output and its arguments are never parsed as markup.

export const $ = (id) => document.getElementById(id);

/** An element with text (as text) and a class. */
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/** An element holding the given children (strings become text nodes). */
export function h(tag, className, ...children) {
  const node = el(tag, undefined, className);
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

export function button(text, className, onClick) {
  const node = el('button', text, className);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/**
 * A link for a URL a run mentions: only http(s), opened in a new tab without a referrer or a
 * handle on this page (the page never follows one by itself).
 */
export function urlLink(text) {
  let url;
  try {
    url = new URL(text);
  } catch {
    return el('code', text, 'url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return el('code', text, 'url');
  const link = el('a', text, 'url');
  link.href = url.href;
  link.target = '_blank';
  link.rel = 'noopener noreferrer';
  link.referrerPolicy = 'no-referrer';
  return link;
}

export const count = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '—');

export function costText(costUsd) {
  if (costUsd === null || costUsd === undefined) return 'cost unknown';
  if (costUsd > 0 && costUsd < 0.0001) return '<$0.0001';
  return `$${costUsd.toFixed(4)}`;
}

export function durationText(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return minutes < 60 ? `${minutes} min ${seconds} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export const shareText = (share) => (typeof share === 'number' ? `${Math.round(share * 100)}% cached` : 'cache —');

/** `1,200 in (800 cached) · 56 out`: the cache where the provider reported it. */
export function tokensText(usage) {
  if (!usage) return '';
  const cached = usage.cachedInputTokens === undefined ? '' : ` (${count(usage.cachedInputTokens)} cached)`;
  return `${count(usage.inputTokens)} in${cached} · ${count(usage.outputTokens)} out`;
}

export const isFinal = (status) => status === 'finished' || status === 'failed';

/** A run-supplied string, shortened for a one-line label. */
export const oneLine = (text, limit = 120) => {
  const flat = String(text ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
};
