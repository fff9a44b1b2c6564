import { getEncoding } from 'js-tiktoken';
import { describe, expect, it } from 'vitest';
import { measurePrefixes } from '../cost/prefix.mjs';

const encoder = getEncoding('o200k_base');
const encode = (text: string) => encoder.encode(text, 'all');
const tokens = (value: unknown) => encode(JSON.stringify(value)).length;

const tools = [{ type: 'function', function: { name: 'search', parameters: { type: 'object' } } }];
const system = { role: 'system', content: 'You are a research assistant.' };
const user = { role: 'user', content: 'Find the bus pass prices in Kyoto.' };
const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', function: { name: 'search' } }] };
const result = { role: 'tool', tool_call_id: 'c1', content: 'One-day bus pass: 700 yen. Subway and bus: 1,100 yen.' };

describe("the cost table's cacheable share", () => {
  it('counts a request that appends to the previous one as cacheable up to the previous one', () => {
    const first = { tools, messages: [system, user] };
    const second = { tools, messages: [system, user, call, result] };
    const measured = measurePrefixes([first, second], encode);

    const firstTokens = tokens(tools) + tokens(system) + tokens(user);
    expect(measured.requests).toEqual([
      { tokens: firstTokens, cacheable: 0 },
      { tokens: firstTokens + tokens(call) + tokens(result), cacheable: firstTokens },
    ]);
    expect(measured.tokens).toBe(2 * firstTokens + tokens(call) + tokens(result));
    expect(measured.cacheable).toBe(firstTokens);
    expect(measured.largest).toBe(firstTokens + tokens(call) + tokens(result));
  });

  it('stops the prefix where a message is rewritten, within that message', () => {
    const rewritten = { ...result, content: 'One-day bus pass [shortened]' };
    const first = { tools, messages: [system, user, call, result, user] };
    const second = { tools, messages: [system, user, call, rewritten, user] };
    const [, measured] = measurePrefixes([first, second], encode).requests;

    // The rewritten message's shared start counts, the unchanged message after it does not.
    const sharedStart = encode('{"role":"tool","tool_call_id":"c1","content":"One-day bus pass').length;
    expect(measured.cacheable).toBe(tokens(tools) + tokens(system) + tokens(user) + tokens(call) + sharedStart);
    expect(measured.tokens - measured.cacheable).toBe(tokens(rewritten) - sharedStart + tokens(user));
  });

  it('takes the longest prefix shared with any earlier request, not only the previous one', () => {
    const step = { tools, messages: [system, user, call, result] };
    const sideCall = { tools: [], messages: [{ role: 'user', content: 'Summarise this page.' }] };
    const next = { tools, messages: [system, user, call, result, call] };
    const [, side, measured] = measurePrefixes([step, sideCall, next], encode).requests;

    expect(side?.cacheable).toBe(0);
    expect(measured?.cacheable).toBe(tokens(tools) + tokens(system) + tokens(user) + tokens(call) + tokens(result));
  });

  it('counts a changed tool list as a miss from the start', () => {
    const first = { tools, messages: [system, user] };
    const second = {
      tools: [...tools, { type: 'function', function: { name: 'fetch_page' } }],
      messages: [system, user],
    };
    const [, measured] = measurePrefixes([first, second], encode).requests;

    // Only the tools array's shared opening counts (short of its last tokens, where the list goes on); the messages after it do not.
    expect(measured?.cacheable).toBeGreaterThan(0);
    expect(measured?.cacheable).toBeLessThan(tokens(tools));
  });
});
