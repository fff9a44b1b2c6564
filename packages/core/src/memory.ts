import type { Message } from './messages.js';

export interface MemoryWindow {
  readonly messages: readonly Message[];
  /** Messages of the history not sent this time. */
  readonly dropped: number;
}

/**
 * Picks the history sent with a request: whole turns from the end (an assistant message
 * with tool calls travels with all its tool results), at most `maxMessages` when turns allow,
 * and the task message always included. Work is proportional to the window, not the history.
 */
export function selectWindow(messages: readonly Message[], taskIndex: number, maxMessages: number): MemoryWindow {
  if (messages.length <= maxMessages) return { messages, dropped: 0 };
  let start = messages.length;
  while (start > 0) {
    let unitStart = start - 1;
    while (unitStart > 0 && messages[unitStart]?.role === 'tool') unitStart--;
    const keepsTask = unitStart <= taskIndex;
    const size = messages.length - unitStart + (keepsTask ? 0 : 1);
    // The newest turn always goes, whatever its size: a request needs it.
    if (size > maxMessages && start !== messages.length) break;
    start = unitStart;
  }
  // A window that starts with tool results would be rejected by the API: skip to a clean start.
  while (start < messages.length && messages[start]?.role === 'tool') start++;
  const tail = messages.slice(start);
  if (start <= taskIndex) return { messages: tail, dropped: start };
  const task = messages[taskIndex];
  return task ? { messages: [task, ...tail], dropped: start - 1 } : { messages: tail, dropped: start };
}
