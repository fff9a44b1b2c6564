import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach } from 'vitest';

export const TOKEN = 'test-token-0123456789abcdef';

export const tempDir = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-service-')));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
/** Runs after the current test, newest first. */
export const onCleanup = (cleanup: () => Promise<void>) => void cleanups.push(cleanup);

export const finish = (text: string) => ({
  content: text,
  toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }],
});

/** A server-sent event's data. */
export interface WireItem {
  readonly type: string;
  readonly run?: Record<string, unknown> & { readonly pending?: readonly Record<string, unknown>[] };
  readonly event?: { readonly type: string };
  readonly plan?: { readonly steps: readonly { readonly text: string; readonly status: string }[] };
  readonly usage?: Record<string, unknown>;
}

/** Checks `condition` until it holds (the test's own timeout bounds the wait). */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await sleep(25);
}

/** A client of the service at `base`, with its token: what the README's curl commands do. */
export function client(base: string, token: string) {
  const auth = { authorization: `Bearer ${token}` };
  /** A well-formed request. */
  const call = async (method: string, path: string, body?: object, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  /** Reads the server-sent events of a run until the server ends the stream. */
  const events = async (id: string) => {
    const text = await (await fetch(`${base}/runs/${id}/events`, { headers: auth })).text();
    return text
      .split('\n\n')
      .flatMap((block) => block.split('\n').filter((line) => line.startsWith('data: ')))
      .map((line) => JSON.parse(line.slice(6)) as WireItem);
  };
  /** Approves (or rejects) the pending call `callId` by the effect id the run lists for it. */
  const decide = async (id: string, callId: string, approved = true, reason?: string) => {
    const pending = (await call('GET', `/runs/${id}`)).json.pending as { callId: string; effectId: string }[];
    const effectId = pending.find((p) => p.callId === callId)?.effectId ?? callId;
    return call('POST', `/runs/${id}/${approved ? 'approve' : 'reject'}`, { effectId, ...(reason ? { reason } : {}) });
  };
  return { auth, call, events, decide };
}
