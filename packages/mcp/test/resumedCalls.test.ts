// A call of a remote server's tool resumed by a new process: approved after a restart, or paused on
// the server's question when nobody was at hand to answer it (no onElicitation) — the run waits on it
// as on ask_human and resumes with the person's answer, the call made again, the same question
// answered at once from what the person said. Our server (createMcpServer) over HTTP on 127.0.0.1,
// our client in an agent's run, the saved state passed through JSON and a new client each time.

import {
  type AgentState,
  createAgent,
  defineTool,
  type PendingInput,
  type RunOutcome,
  resumeWith,
  run,
  type Tool,
  terminate,
} from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { withMcp } from '../src/agents/withMcp.js';
import { replyOf } from '../src/client/elicitationPause.js';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import { createMcpServer, type McpToolServer } from '../src/server/mcpServer.js';
import { block } from './helpers.js';

const FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2, description: 'As on your badge' },
    team: { type: 'string', enum: ['red', 'blue'], default: 'blue' },
  },
  required: ['name'],
};
const CITY = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

/** How many times each remote tool was called. */
const calls = { sign_up: 0, book: 0 };

const remoteTools: Tool[] = [
  defineTool({
    name: 'sign_up',
    description: 'Signs the person up.',
    parameters: z.object({}),
    execute: async (_, scope) => {
      calls.sign_up++;
      return JSON.stringify(await scope.elicit({ message: 'Your name?', schema: FORM }));
    },
  }),
  defineTool({
    name: 'book',
    description: 'Books a trip: asks who, then where.',
    parameters: z.object({ nights: z.number() }),
    execute: async ({ nights }, scope) => {
      calls.book++;
      const who = await scope.elicit({ message: 'Who travels?', schema: FORM });
      if (who.action !== 'accept') return `Not booked (${who.action}).`;
      const where = await scope.elicit({ message: 'Where to?', schema: CITY });
      if (where.action !== 'accept') return `Not booked (${where.action}).`;
      return `Booked ${nights} nights in ${where.content.city} for ${who.content.name}.`;
    },
  }),
];

let server: McpToolServer | undefined;
let address: { url: string; token: string } | undefined;
const clients: McpClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await server?.close();
  server = undefined;
  address = undefined;
  calls.sign_up = 0;
  calls.book = 0;
});

/** Our server over HTTP (once per test); each call gives a new client of it, as a new process would. */
async function newClient(): Promise<McpClient> {
  if (!server) {
    server = createMcpServer(remoteTools);
    address = await server.serveHttp({ port: 0 });
  }
  const { url, token } = address as { url: string; token: string };
  const client = createMcpClient({
    servers: { remote: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } } },
  });
  clients.push(client);
  await client.connect();
  return client;
}

const agentWith = (client: McpClient) => withMcp(createAgent({ name: 'tester', tools: [terminate] }), client);

/** The saved state as a store would give it back. */
const saved = (outcome: RunOutcome): AgentState => JSON.parse(JSON.stringify(outcome.state));

const onlyPending = (outcome: RunOutcome): Extract<PendingInput, { kind: 'human' }> => {
  expect(outcome.status, JSON.stringify(outcome.state.messages.slice(2))).toBe('awaiting_human');
  expect(outcome.pending).toHaveLength(1);
  const [pending] = outcome.pending;
  if (pending?.kind !== 'human') throw new Error(`expected a question, got ${JSON.stringify(pending)}`);
  return pending;
};

const observations = (outcome: RunOutcome) =>
  outcome.state.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));

/** Answers the run's one question with `answer`, on a new client, and runs on. */
async function answer(outcome: RunOutcome, text: string, script = [{ content: 'Done.' }]): Promise<RunOutcome> {
  const { effectId } = onlyPending(outcome);
  return resumeWith(
    agentWith(await newClient()),
    saved(outcome),
    { type: 'humanReplied', effectId, answer: text },
    { llm: scriptedLlm(script) },
  );
}

describe("a server's question with no person at hand pauses the run", () => {
  it('waits for a person with the form, and resumes with their answer sent to the server', async () => {
    const client = await newClient();
    const paused = await run(agentWith(client), 'Sign me up.', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'mcp_remote_sign_up', arguments: {} }] }]),
    });
    const pending = onlyPending(paused);
    expect(pending.effectId).toMatch(/\/elicit-1$/);
    expect(pending.form).toEqual({ message: 'Your name?', schema: FORM });
    expect(pending.call.name).toBe('mcp_remote_sign_up');
    expect(pending.question).toContain('The MCP server "remote" asks, during its tool sign_up: Your name?');
    expect(pending.question).toContain('- name (string, required): As on your badge');
    expect(pending.question).toContain('- team (one of ["red","blue"], default "blue")');
    expect(observations(paused)).toEqual([]);

    const done = await answer(paused, '{"name": "Ada"}');
    expect(done.status).toBe('finished');
    expect(observations(done)).toEqual([
      block('remote', JSON.stringify({ action: 'accept', content: { name: 'Ada', team: 'blue' } })),
    ]);
    // Asked once before the pause, once again on resume (the answer then given at once).
    expect(calls.sign_up).toBe(2);
  });

  it('asks again, without calling the server, when the answer does not fit the form', async () => {
    const paused = await run(agentWith(await newClient()), 'Sign me up.', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'mcp_remote_sign_up', arguments: {} }] }]),
    });
    const again = await answer(paused, '{"name": "A"}');
    const pending = onlyPending(again);
    expect(pending.question).toMatch(/^Your last answer was not taken: "name" must have at least 2 characters\./);
    // Asked again under a new id: a host that takes one answer per id (a durable run's) can answer it.
    expect(pending.effectId).toMatch(/\/elicit-2$/);
    expect(calls.sign_up).toBe(1);

    const done = await answer(again, '{"action": "decline"}');
    expect(observations(done)).toEqual([block('remote', JSON.stringify({ action: 'decline' }))]);
  });

  it('pauses on each new question of a call, and replays the earlier answers in order', async () => {
    const paused = await run(agentWith(await newClient()), 'Book it.', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'mcp_remote_book', arguments: { nights: 3 } }] }]),
    });
    expect(onlyPending(paused).form?.message).toBe('Who travels?');
    const second = await answer(paused, '{"name": "Ada", "team": "red"}');
    const where = onlyPending(second);
    expect(where.effectId).toMatch(/\/elicit-2$/);
    expect(where.form?.message).toBe('Where to?');
    // A one-field form takes its value as plain text.
    expect(where.question).toContain('Answer with the fields as JSON, or just the value of city');
    const done = await answer(second, 'Lisbon');
    expect(observations(done)).toEqual([block('remote', 'Booked 3 nights in Lisbon for Ada.')]);
    expect(calls.book).toBe(3);
  });

  it('calls the server afresh when the saved progress is not what it paused with', async () => {
    const paused = await run(agentWith(await newClient()), 'Sign me up.', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'mcp_remote_sign_up', arguments: {} }] }]),
    });
    const state = saved(paused);
    const [call] = state.turn?.calls ?? [];
    if (!call) throw new Error('no call in the saved turn');
    const tampered: AgentState = {
      ...state,
      turn: { calls: [{ ...call, progress: { mcpElicitation: { answered: 'all of them', asking: 42 } } }] },
    };
    const { effectId } = onlyPending(paused);
    const again = await resumeWith(
      agentWith(await newClient()),
      tampered,
      { type: 'humanReplied', effectId, answer: '{"name": "Ada"}' },
      { llm: scriptedLlm([]) },
    );
    // Nothing taken from the bad progress: the server asked again, and the run waits again.
    expect(onlyPending(again).question).not.toContain('not taken');
    expect(calls.sign_up).toBe(2);
  });
});

describe('a call approved after a restart', () => {
  it("runs on the new process's client, which the resumed run finds the tool on", async () => {
    const paused = await run(agentWith(await newClient()), 'Book it.', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'mcp_remote_book', arguments: { nights: 2 } }] }]),
      approvals: ['mcp_remote_book'],
    });
    expect(paused.status).toBe('awaiting_approval');
    const [pending] = paused.pending;
    if (pending?.kind !== 'approval') throw new Error('expected an approval');
    const asked = await resumeWith(
      agentWith(await newClient()),
      saved(paused),
      { type: 'approvalGiven', effectId: pending.effectId },
      { llm: scriptedLlm([]), approvals: ['mcp_remote_book'] },
    );
    // The approved call reached the server (which now asks who travels), not "the tool is not available".
    expect(onlyPending(asked).form?.message).toBe('Who travels?');
    expect(calls.book).toBe(1);
  });
});

describe('a person’s text as the answer to a form', () => {
  it('takes JSON fields, an action, a one-field value, or nothing', () => {
    expect(replyOf('{"name":"Ada"}', FORM)).toEqual({ action: 'accept', content: { name: 'Ada', team: 'blue' } });
    expect(replyOf('{"action":"accept","content":{"name":"Bo"}}', FORM)).toEqual({
      action: 'accept',
      content: { name: 'Bo', team: 'blue' },
    });
    expect(replyOf('{"action":"cancel"}', FORM)).toEqual({ action: 'cancel' });
    expect(replyOf('  ', FORM)).toEqual({ action: 'cancel' });
    expect(replyOf('Porto', CITY)).toEqual({ action: 'accept', content: { city: 'Porto' } });
    const flags = { type: 'object', properties: { ok: { type: 'boolean' } } };
    expect(replyOf('yes', flags)).toEqual({ action: 'accept', content: { ok: true } });
    const count = { type: 'object', properties: { n: { type: 'integer' } } };
    expect(replyOf('3', count)).toEqual({ action: 'accept', content: { n: 3 } });
  });

  it('says why an answer does not fit', () => {
    expect(replyOf('Ada', FORM)).toBe('this form has several fields: answer with them as a JSON object');
    expect(replyOf('{"name":"Ada","age":3}', FORM)).toBe('"age" is not a field of the form');
    expect(replyOf('{"action":"accept","content":[1]}', FORM)).toBe('its "content" must be an object');
    expect(replyOf('three', { type: 'object', properties: { n: { type: 'integer' } } })).toBe('"n" must be a number');
  });
});
