// A tool a run added itself (through scope.changeTools, as an MCP client does) lived in that run:
// a resumed run's call of it — approved after a restart — is found again through Agent.findTool.

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Agent, createAgent, defineTool, type RunOutcome, resumeWith, run, type Tool } from '../src/index.js';
import { scriptedLlm } from '../src/testing/index.js';

let calls = 0;
const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  parameters: z.object({ order: z.string() }),
  execute: ({ order }) => {
    calls++;
    return `Refunded ${order}.`;
  },
});

/** An agent whose tool comes from a context gatherer at its first step, not from its config. */
function addingAgent(findTool?: Agent['findTool']): Agent {
  const agent = createAgent({
    name: 'desk',
    contextProviders: [{ name: 'adder', when: () => true, apply: (_gathered, request) => request }],
    contextGatherers: {
      adder: async (scope) => {
        await scope.changeTools({ add: [refund] });
        return null;
      },
    },
  });
  return findTool ? { ...agent, findTool } : agent;
}

const observations = (outcome: RunOutcome) =>
  outcome.state.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));

async function approvedAfterRestart(findTool?: Agent['findTool']) {
  calls = 0;
  const paused = await run(addingAgent(), 'Refund A-1.', {
    llm: scriptedLlm([{ toolCalls: [{ name: 'refund', arguments: { order: 'A-1' } }] }]),
    approvals: ['refund'],
  });
  expect(paused.status).toBe('awaiting_approval');
  const [pending] = paused.pending;
  const state = JSON.parse(JSON.stringify(paused.state));
  return resumeWith(
    addingAgent(findTool),
    state,
    { type: 'approvalGiven', effectId: pending?.effectId ?? '' },
    {
      llm: scriptedLlm([{ content: 'Done.' }]),
      approvals: ['refund'],
    },
  );
}

describe('a call of a tool the run added, resumed in a new run', () => {
  it('runs the tool the agent finds by name', async () => {
    const asked: string[] = [];
    const done = await approvedAfterRestart(async (name) => {
      asked.push(name);
      return name === 'refund' ? (refund as Tool) : undefined;
    });
    expect(asked).toEqual(['refund']);
    expect(observations(done)).toEqual(['Refunded A-1.']);
    expect(calls).toBe(1);
  });

  it('is answered as unavailable when the agent finds nothing, or fails looking', async () => {
    for (const findTool of [undefined, async () => undefined, async () => Promise.reject(new Error('offline'))]) {
      const done = await approvedAfterRestart(findTool);
      expect(observations(done)[0]).toMatch(/^Error: the tool 'refund' is not available\./);
      expect(calls).toBe(0);
    }
  });
});
