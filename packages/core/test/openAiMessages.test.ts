import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assistantMessage, type Message, systemMessage, userMessage } from '../src/kernel/messages.js';
import { convertMessages, toOpenAiMessages } from '../src/llm/openai.js';

// A copy with new identities: converted from scratch, with nothing remembered from earlier requests.
const fresh = (messages: readonly Message[]) => toOpenAiMessages(structuredClone(messages), false);

/** Converts like a fresh conversion would, and the JSON text kept for the body is that conversion's. */
function expectFresh(messages: readonly Message[]) {
  const wire = convertMessages(messages, false);
  const expected = fresh(messages);
  expect(wire.params).toEqual(expected);
  expect(`[${wire.texts?.join('')}]`).toBe(JSON.stringify(expected));
}

const task = userMessage('add numbers');
const turn = (n: number): Message[] => [
  assistantMessage('', [{ id: `c${n}`, name: 'add', arguments: `{"a":${n}}` }]),
  { role: 'tool', toolCallId: `c${n}`, name: 'add', content: String(n) },
];

describe('toOpenAiMessages across a run’s requests', () => {
  it('a request that appends to the last one converts like a fresh one', () => {
    const first = [systemMessage('s'), task, ...turn(1), userMessage('next')];
    toOpenAiMessages(first, false);
    const second = [systemMessage('s'), task, ...first.slice(2, 4), ...turn(2), userMessage('next')];
    expectFresh(second);
  });

  it('a message replaced at the same place (a summary) is converted anew, not taken from the last request', () => {
    const history = [task, ...turn(1), ...turn(2)];
    toOpenAiMessages([systemMessage('s'), ...history], false);
    const summarised = [task, assistantMessage('summary of turns 1 and 2', []), ...turn(3)];
    const wire = toOpenAiMessages([systemMessage('s'), ...summarised], false);
    expect(wire[2]).toEqual({ role: 'assistant', content: 'summary of turns 1 and 2' });
    expect(wire).toEqual(fresh([systemMessage('s'), ...summarised]));
  });

  it('any sequence of requests sharing a task converts each one like a fresh one', () => {
    const pool = [task, ...turn(1), ...turn(2), ...turn(3), userMessage('hint'), assistantMessage('thinking', [])];
    const request = fc.array(fc.constantFrom(...pool.keys()), { maxLength: 12 });
    fc.assert(
      fc.property(fc.array(request, { minLength: 1, maxLength: 6 }), (requests) => {
        for (const picks of requests) {
          const messages = [systemMessage('s'), task, ...picks.map((i) => pool[i] as Message)];
          expectFresh(messages);
        }
      }),
    );
  });
});

describe('toOpenAiMessages when the caller reuses its array', () => {
  it('an array changed after the last request (appended to, or an element replaced) converts like a fresh one', () => {
    const messages: Message[] = [systemMessage('s'), userMessage('own array'), ...turn(1)];
    toOpenAiMessages(messages, false);
    messages.push(...turn(2));
    expectFresh(messages);
    messages[2] = assistantMessage('replaced in place', []);
    expectFresh(messages);
  });
});

describe('toOpenAiMessages when the caller changes what it was given', () => {
  it('a changed result of the last request does not leak into the next one', () => {
    const messages: Message[] = [systemMessage('s'), userMessage('mine'), ...turn(1)];
    const wire = toOpenAiMessages(messages, false);
    wire[2] = { role: 'user', content: 'tampered' };
    messages.push(...turn(2));
    expectFresh(messages);
  });
});
