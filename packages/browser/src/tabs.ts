/**
 * The tabs of a browser session by stable ids: a tab keeps its id until it is closed, and ids are
 * never reused, so `switch_tab(2)` cannot silently come to mean another tab after one is closed
 * (OpenManus used positions in the tab list).
 */
export interface TabList {
  /** Open tabs, in the order they were opened. */
  readonly ids: readonly number[];
  readonly current?: number;
  readonly nextId: number;
}

export const noTabs: TabList = { ids: [], nextId: 0 };

/** A new tab; it becomes the current one when `focus` is set or no tab is current. */
export function addTab(tabs: TabList, focus: boolean): { readonly tabs: TabList; readonly id: number } {
  const id = tabs.nextId;
  const current = focus || tabs.current === undefined ? id : tabs.current;
  return { tabs: { ids: [...tabs.ids, id], current, nextId: id + 1 }, id };
}

/** Without the tab; closing the current one makes its neighbour current (the next one, else the one before). */
export function removeTab(tabs: TabList, id: number): TabList {
  const index = tabs.ids.indexOf(id);
  if (index === -1) return tabs;
  const ids = tabs.ids.filter((other) => other !== id);
  if (tabs.current !== id) return { ...tabs, ids };
  const neighbour = ids[index] ?? ids[index - 1];
  return neighbour === undefined ? { ids, nextId: tabs.nextId } : { ids, current: neighbour, nextId: tabs.nextId };
}

/** The list with `id` current, or undefined when there is no such tab. */
export function focusTab(tabs: TabList, id: number): TabList | undefined {
  return tabs.ids.includes(id) ? { ...tabs, current: id } : undefined;
}
