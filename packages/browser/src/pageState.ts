import { clip, escapeInvisible, shown } from './shown.js';

/** One tab as the state lists it. */
export interface TabSummary {
  readonly id: number;
  readonly title: string;
  readonly url: string;
}

/** Where the viewport is on the page, in CSS pixels. */
export interface ScrollPosition {
  readonly y: number;
  readonly height: number;
  readonly viewportHeight: number;
}

/** A JavaScript dialog waiting for handle_dialog. */
export interface OpenDialog {
  readonly type: string;
  readonly message: string;
}

/** What the head of the page state says: where the browser is and what happened since the last state. */
export interface PageFacts {
  readonly url: string;
  readonly title: string;
  /** The HTTP status of the page's document, when it came over HTTP. */
  readonly status?: number;
  readonly tabs: readonly TabSummary[];
  readonly currentTab: number;
  readonly scroll?: ScrollPosition;
  /** What happened since the last state (a tab opened, a download saved, a dialog handled). */
  readonly events: readonly string[];
  readonly consoleErrors: number;
  readonly dialog?: OpenDialog;
}

/** Characters of a URL, a title, an event or a dialog's message the state shows at most. */
const MAX_URL = 300;
const MAX_TITLE = 120;
const MAX_TAB_TITLE = 40;
const MAX_TAB_URL = 100;
const MAX_EVENT = 200;
const MAX_EVENTS = 10;
const MAX_TABS = 12;
const MAX_MESSAGE = 300;

/** A tab's URL as short as it can be read: a path when it is on the current page's origin. */
function relativeTo(url: string, current: string): string {
  try {
    const target = new URL(url);
    if (target.origin !== 'null' && target.origin === new URL(current).origin) {
      return target.pathname + target.search + target.hash;
    }
  } catch {}
  return url;
}

function tabsLine(facts: PageFacts): string {
  // The current tab is always listed, the others up to the cap.
  const listed = facts.tabs.filter((tab, i) => i < MAX_TABS - 1 || tab.id === facts.currentTab).slice(0, MAX_TABS);
  const tabs = listed.map((tab) => {
    const mark = tab.id === facts.currentTab ? '*' : '';
    const where = tab.id === facts.currentTab ? tab.url : relativeTo(tab.url, facts.url);
    return `[${tab.id}]${mark} ${shown(tab.title || '(untitled)', MAX_TAB_TITLE)} — ${shown(where, MAX_TAB_URL)}`;
  });
  const more = facts.tabs.length > listed.length ? ` | ${facts.tabs.length - listed.length} more tabs` : '';
  return `Tabs: ${tabs.join(' | ')}${more}`;
}

function scrollLine({ y, height, viewportHeight }: ScrollPosition): string {
  const above = Math.max(0, Math.round(y));
  const below = Math.max(0, Math.round(height - y - viewportHeight));
  if (above === 0 && below === 0) return 'Scroll: the whole page is in view';
  const screens = viewportHeight > 0 ? (below / viewportHeight).toFixed(1) : '?';
  const hint = below > 0 ? ` (${screens} screens) — scroll_down for more` : ' — the end of the page';
  return `Scroll: ${above} px above, ${below} px below${hint}`;
}

/** The head of the page state, one fact per line (tabs and scroll position when given). */
export function describePage(facts: PageFacts): string {
  const status = facts.status === undefined ? '' : `   (HTTP ${facts.status})`;
  const lines = [`URL: ${shown(facts.url, MAX_URL)}   Title: ${shown(facts.title, MAX_TITLE) || '(none)'}${status}`];
  if (facts.tabs.length > 0) lines.push(tabsLine(facts));
  if (facts.scroll) lines.push(scrollLine(facts.scroll));
  const events = facts.events.slice(0, MAX_EVENTS).map((event) => shown(event, MAX_EVENT));
  if (facts.events.length > MAX_EVENTS) events.push(`${facts.events.length - MAX_EVENTS} more events`);
  if (facts.consoleErrors > 0) {
    events.push(`${facts.consoleErrors} console error${facts.consoleErrors === 1 ? '' : 's'}`);
  }
  if (events.length > 0) lines.push(`Events: ${events.join('; ')}`);
  if (facts.dialog) {
    lines.push(
      `Dialog: ${facts.dialog.type} ${escapeInvisible(JSON.stringify(clip(facts.dialog.message, MAX_MESSAGE)))} is open — ` +
        'call handle_dialog (accept true or false) before anything else',
    );
  }
  return lines.join('\n');
}
