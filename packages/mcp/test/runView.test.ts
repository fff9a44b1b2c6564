// How a run's tools follow the client's, and what the model is told: a pure function of what the
// run has, what the client has, and where each server stands.
import { describe, expect, it } from 'vitest';
import { changeView, type RunView, type ViewedTool } from '../src/client/runView.js';

const tools = (entries: Record<string, [string, string]>) =>
  new Map<string, ViewedTool>(
    Object.entries(entries).map(([name, [server, fingerprint]]) => [name, { server, fingerprint }]),
  );
const up = (id: string) => ({ id, state: 'connected' as const });
const down = (id: string, error: string) => ({ id, state: 'reconnecting' as const, error });

describe('changeView', () => {
  it('a run that has just started gets every tool silently, and loses those an earlier run left', () => {
    const now = tools({ mcp_a_x: ['a', '1'] });
    const change = changeView(undefined, now, [up('a')], new Set(['mcp_a_x', 'mcp_a_old']));
    expect(change).toMatchObject({ add: ['mcp_a_x'], remove: ['mcp_a_old'], notes: [] });
  });

  it('a run that has just started is told of a server that is not connected, once', () => {
    const first = changeView(undefined, new Map(), [down('b', 'could not start "b"')], new Set());
    expect(first.notes).toEqual([
      'The MCP server "b" is not connected (could not start "b"), so its tools are unavailable for now. It is being reconnected in the background.',
    ]);
    expect(changeView(first.view, new Map(), [down('b', 'again')], new Set()).notes).toEqual([]);
  });

  it('tells of tools added, withdrawn and changed, per server, and changes only those', () => {
    const before: RunView = {
      tools: tools({ mcp_a_x: ['a', '1'], mcp_a_y: ['a', '1'], mcp_b_z: ['b', '1'] }),
      down: new Set(),
      leftOut: new Map(),
    };
    const now = tools({ mcp_a_x: ['a', '2'], mcp_a_new: ['a', '1'], mcp_b_z: ['b', '1'] });
    const change = changeView(before, now, [up('a'), up('b')], new Set());
    expect(change.add).toEqual(['mcp_a_x', 'mcp_a_new']);
    expect(change.remove).toEqual(['mcp_a_y']);
    expect(change.notes).toEqual([
      'The MCP server "a" changed its tools. New: mcp_a_new. Withdrawn: mcp_a_y. Changed (description or parameters): mcp_a_x.',
    ]);
  });

  it('a server lost, then back: its tools go and come, each time with a note', () => {
    const before: RunView = { tools: tools({ mcp_a_x: ['a', '1'] }), down: new Set(), leftOut: new Map() };
    const lost = changeView(before, new Map(), [down('a', 'the server process ended')], new Set());
    expect(lost).toMatchObject({
      add: [],
      remove: ['mcp_a_x'],
      notes: [
        'The MCP server "a" disconnected (the server process ended). Its tools were withdrawn: mcp_a_x. It is being reconnected in the background.',
      ],
    });
    const back = changeView(lost.view, tools({ mcp_a_x: ['a', '1'] }), [up('a')], new Set());
    expect(back).toMatchObject({
      add: ['mcp_a_x'],
      remove: [],
      notes: ['The MCP server "a" is connected again. Its tools are back: mcp_a_x.'],
    });
  });

  it('a closed client is no longer retried, and says so', () => {
    const before: RunView = { tools: tools({ mcp_a_x: ['a', '1'] }), down: new Set(), leftOut: new Map() };
    const closed = { id: 'a', state: 'closed' as const, error: 'the MCP client was closed' };
    expect(changeView(before, new Map(), [closed], new Set()).notes).toEqual([
      'The MCP server "a" disconnected (the MCP client was closed). Its tools were withdrawn: mcp_a_x.',
    ]);
  });
});
