import { describe, expect, it } from 'vitest';
import { keepNewestImages, selectWindow } from '../src/kernel/memory.js';
import type { Message } from '../src/kernel/messages.js';

const user = (content: string): Message => ({ role: 'user', content });
const said = (content: string, ...callIds: string[]): Message =>
  callIds.length > 0
    ? { role: 'assistant', content, toolCalls: callIds.map((id) => ({ id, name: 'echo', arguments: '{}' })) }
    : { role: 'assistant', content };
const result = (id: string): Message => ({ role: 'tool', content: `ok ${id}`, toolCallId: id, name: 'echo' });

/** What a window shows, one short label per message. */
const labels = (messages: readonly Message[]) =>
  messages.map((m) => (m.role === 'tool' ? `tool:${m.toolCallId}` : `${m.role}:${m.content}`));

// task · a1→c1 · a2 (text) · a3→c2,c3 · a4→c4
const history: readonly Message[] = [
  user('task'),
  said('a1', 'c1'),
  result('c1'),
  said('a2'),
  said('a3', 'c2', 'c3'),
  result('c2'),
  result('c3'),
  said('a4', 'c4'),
  result('c4'),
];

describe('selectWindow', () => {
  it('sends the whole history, as the same array, when it fits', () => {
    for (const max of [9, 10, 100]) {
      const window = selectWindow(history, 0, max);
      expect(window.messages).toBe(history);
      expect(window.dropped).toBe(0);
    }
  });

  it('keeps as many whole turns from the end as fit with the task', () => {
    const expected: Record<number, string[]> = {
      8: ['user:task', 'assistant:a2', 'assistant:a3', 'tool:c2', 'tool:c3', 'assistant:a4', 'tool:c4'],
      7: ['user:task', 'assistant:a2', 'assistant:a3', 'tool:c2', 'tool:c3', 'assistant:a4', 'tool:c4'],
      6: ['user:task', 'assistant:a3', 'tool:c2', 'tool:c3', 'assistant:a4', 'tool:c4'],
      5: ['user:task', 'assistant:a4', 'tool:c4'],
      3: ['user:task', 'assistant:a4', 'tool:c4'],
    };
    for (const [max, shown] of Object.entries(expected)) {
      const window = selectWindow(history, 0, Number(max));
      expect(labels(window.messages), `maxMessages ${max}`).toEqual(shown);
      expect(window.dropped, `maxMessages ${max}`).toBe(history.length - shown.length);
    }
  });

  it('sends the newest turn whole even when it alone is over the limit', () => {
    for (const max of [1, 2]) {
      const window = selectWindow(history, 0, max);
      expect(labels(window.messages)).toEqual(['user:task', 'assistant:a4', 'tool:c4']);
      expect(window.dropped).toBe(6);
    }
    const wide = [user('task'), said('a', 'x', 'y', 'z'), result('x'), result('y'), result('z')];
    const window = selectWindow(wide, 0, 2);
    expect(labels(window.messages)).toEqual(['user:task', 'assistant:a', 'tool:x', 'tool:y', 'tool:z']);
    expect(window.dropped).toBe(0);
  });

  it('never cuts between a call and its results', () => {
    for (let max = 1; max <= 9; max++) {
      const { messages } = selectWindow(history, 0, max);
      expect(messages[1]?.role, `maxMessages ${max}`).toBe('assistant');
      expect(messages.filter((m) => m.role === 'tool').length, `maxMessages ${max}`).toBe(
        messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])).length,
      );
    }
  });

  describe('in a later task', () => {
    // An earlier task and its answer, then the current task (index 2) and its turns.
    const later: readonly Message[] = [
      user('first'),
      said('answer'),
      user('second'),
      said('b1', 'd1'),
      result('d1'),
      said('b2', 'd2'),
      result('d2'),
    ];

    it('keeps earlier history that fits, from the end', () => {
      const window = selectWindow(later, 2, 6);
      expect(labels(window.messages)).toEqual([
        'assistant:answer',
        'user:second',
        'assistant:b1',
        'tool:d1',
        'assistant:b2',
        'tool:d2',
      ]);
      expect(window.dropped).toBe(1);
    });

    it('starts at the task, once, when nothing before it fits', () => {
      const window = selectWindow(later, 2, 5);
      expect(labels(window.messages)).toEqual(['user:second', 'assistant:b1', 'tool:d1', 'assistant:b2', 'tool:d2']);
      expect(window.dropped).toBe(2);
    });

    it('puts the task first when turns after it had to go', () => {
      const window = selectWindow(later, 2, 4);
      expect(labels(window.messages)).toEqual(['user:second', 'assistant:b2', 'tool:d2']);
      expect(window.messages[0]).toBe(later[2]);
      expect(window.dropped).toBe(4);
    });
  });
});

describe('keepNewestImages', () => {
  const shot = (n: string) => ({ base64: n, mimeType: 'image/png' });
  const task: Message = { role: 'user', content: 'what is this?', image: shot('TASK') };
  const screenshot = (id: string, data: string): Message => ({
    role: 'tool',
    content: `ok ${id}`,
    toolCallId: id,
    name: 'echo',
    image: shot(data),
  });
  const messages: readonly Message[] = [
    task,
    said('look', 'a'),
    screenshot('a', 'AAAA'),
    said('again', 'b'),
    screenshot('b', 'BBBB'),
  ];
  const imagesOf = (list: readonly Message[]) =>
    list.map((m) => ('image' in m && m.image ? m.image.base64 : '-')).join(' ');

  it('keeps the images of the newest `keep` messages that have one, the task’s included', () => {
    expect(imagesOf(keepNewestImages(messages, 1))).toBe('- - - - BBBB');
    expect(imagesOf(keepNewestImages(messages, 2))).toBe('- - AAAA - BBBB');
    expect(imagesOf(keepNewestImages(messages, 0))).toBe('- - - - -');
  });

  it('removes only the image: the message is otherwise the same', () => {
    const kept = keepNewestImages(messages, 1);
    expect(kept[0]).toEqual({ role: 'user', content: 'what is this?' });
    expect(kept[2]).toEqual(result('a'));
    expect(kept[1]).toBe(messages[1]);
    expect(kept[4]).toBe(messages[4]);
    expect(imagesOf(messages)).toBe('TASK - AAAA - BBBB');
  });

  it('returns the same array when every image stays', () => {
    expect(keepNewestImages(messages, 3)).toBe(messages);
    expect(keepNewestImages(messages, 10)).toBe(messages);
    const plain = [user('x'), said('y')];
    expect(keepNewestImages(plain, 0)).toBe(plain);
  });

  it('a message whose image is undefined has no image to count', () => {
    const list: Message[] = [screenshot('a', 'AAAA'), { role: 'user', content: 'next', image: undefined }];
    expect(keepNewestImages(list, 1)).toBe(list);
  });
});
