import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LlmPort } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { createSqliteStore, type SqliteStore } from '@openmanus/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { supportAgent } from '../src/agent.js';
import { createRuns, type Runs } from '../src/runs.js';

/** A server under test, reached with fetch's arguments (a real listen, or the framework's own request helper). */
export interface Mounted {
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

const TOKEN = 'test-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const post = (body: object) => ({ method: 'POST', headers: auth, body: JSON.stringify(body) });

/** A JSON answer: a run's id, or the run. */
const json = async (response: Response) =>
  (await response.json()) as { id: string; status: string; pending: Array<{ effectId: string }> };

/** The run items of a server-sent event stream, read to its end (the run paused or ended). */
async function items(response: Response): Promise<Array<Record<string, unknown>>> {
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => JSON.parse(event.slice('data: '.length)));
}

/** The same tests for every framework: approvals over HTTP, the stream, SQLite across a restart, the token. */
export function describeServer(name: string, mount: (runs: Runs) => Promise<Mounted>) {
  describe(`${name}: the support agent over HTTP`, () => {
    let dir: string;
    const opened: Array<{ runs: Runs; store: SqliteStore; server: Mounted }> = [];

    // One server process: runs on the SQLite file in `dir`, answered by `llm`.
    async function start(llm: LlmPort) {
      const store = createSqliteStore(join(dir, 'runs.db'));
      const runs = createRuns({ agent: supportAgent, llm, store, token: TOKEN });
      const server = await mount(runs);
      opened.push({ runs, store, server });
      return { runs, store, server };
    }
    async function stop(process: (typeof opened)[number]) {
      opened.splice(opened.indexOf(process), 1);
      await process.runs.idle();
      await process.server.close();
      process.store.close();
    }

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), `embedding-${name}-`));
    });
    afterEach(async () => {
      for (const server of [...opened]) await stop(server);
      await rm(dir, { recursive: true, force: true });
    });

    // #region approval
    it('pauses a refund for approval, streams the run, and finishes it once approved after a restart', async () => {
      const first = await start(
        scriptedLlm([{ toolCalls: [{ name: 'refund_order', arguments: { orderId: 'A-1002', amount: 120 } }] }]),
      );
      const started = await first.server.fetch('/runs', post({ task: 'Refund order A-1002, it was lost' }));
      expect(started.status).toBe(202);
      const { id } = (await started.json()) as { id: string };

      // The stream delivers the run's items until it pauses: the last one is its result.
      const paused = await items(await first.server.fetch(`/runs/${id}/events`, { headers: auth }));
      expect(paused.map((item) => item.type)).toContain('effect');
      expect(paused.at(-1)).toMatchObject({ type: 'result', result: { status: 'awaiting_approval' } });

      const waiting = await json(await first.server.fetch(`/runs/${id}`, { headers: auth }));
      expect(waiting).toMatchObject({
        status: 'awaiting_approval',
        pending: [{ kind: 'approval', tool: 'refund_order' }],
      });
      const effectId = waiting.pending[0]?.effectId;

      // A restart: a new store on the same SQLite file reads the paused run back.
      await stop(first);
      const second = await start(scriptedLlm([{ content: 'Refunded 120 EUR on A-1002.' }]));
      const reread = await (await second.server.fetch(`/runs/${id}`, { headers: auth })).json();
      expect(reread).toMatchObject({ status: 'awaiting_approval', pending: [{ effectId }] });

      expect((await second.server.fetch(`/runs/${id}/approve`, post({ effectId }))).status).toBe(202);
      const resumed = await items(await second.server.fetch(`/runs/${id}/events`, { headers: auth }));
      // The refund ran once approved: its tool call, then its result.
      expect(resumed).toContainEqual(
        expect.objectContaining({
          event: { type: 'toolCompleted', effectId: 'running-1-0', output: 'Refunded 120 EUR on A-1002.' },
        }),
      );
      expect(resumed.at(-1)).toMatchObject({
        type: 'result',
        result: { status: 'finished', answer: 'Refunded 120 EUR on A-1002.' },
      });
      const done = await (await second.server.fetch(`/runs/${id}`, { headers: auth })).json();
      expect(done).toMatchObject({ status: 'finished', answer: 'Refunded 120 EUR on A-1002.', pending: [] });
      // The call is decided: a second approval is refused.
      expect((await second.server.fetch(`/runs/${id}/approve`, post({ effectId }))).status).toBe(409);
    });
    // #endregion approval

    it('hands a rejection and its reason to the model; the refund never runs', async () => {
      const llm = scriptedLlm([
        { toolCalls: [{ name: 'refund_order', arguments: { orderId: 'A-1001', amount: 42 } }] },
        { content: 'I cannot refund a delivered order.' },
      ]);
      const { server, runs } = await start(llm);
      const { id } = await json(await server.fetch('/runs', post({ task: 'Refund A-1001' })));
      await runs.idle();
      const { pending } = await json(await server.fetch(`/runs/${id}`, { headers: auth }));
      const rejected = await server.fetch(
        `/runs/${id}/reject`,
        post({ effectId: pending[0]?.effectId, reason: 'delivered' }),
      );
      expect(rejected.status).toBe(202);
      await runs.idle();
      expect(await (await server.fetch(`/runs/${id}`, { headers: auth })).json()).toMatchObject({
        status: 'finished',
        answer: 'I cannot refund a delivered order.',
      });
      expect(JSON.stringify(llm.requests[1]?.messages.at(-1))).toContain('delivered');
    });

    it('refuses a request without the token, or with another one', async () => {
      const { server } = await start(scriptedLlm([]));
      const bare = await server.fetch('/runs', { method: 'POST', body: '{"task":"Refund everything"}' });
      expect(bare.status).toBe(401);
      expect(bare.headers.get('www-authenticate')).toBe('Bearer');
      const wrong = await server.fetch('/runs/x', { headers: { authorization: 'Bearer not-the-token-at-all' } });
      expect(wrong.status).toBe(401);
      expect((await server.fetch('/runs/x', { headers: auth })).status).toBe(404);
      expect((await server.fetch('/runs', post({ nothing: true }))).status).toBe(400);
    });
  });
}
