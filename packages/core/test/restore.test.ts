import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { migrate, migrations } from '../src/kernel/migrations.js';
import { type AgentState, SCHEMA_VERSION } from '../src/kernel/state.js';
import { agentStateSchema, restoreState } from '../src/kernel/stateSchema.js';
import { err } from '../src/result.js';

// States saved by released versions (v1, v2) and hand-written states of the current one (v3).
const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const filesOf = (prefix: string) =>
  readdirSync(dir)
    .filter((file) => file.startsWith(prefix) && file.endsWith('.json'))
    .sort();
const v1Files = filesOf('state-v1-');
const v2Files = filesOf('state-v2-');
const v3Files = filesOf('state-v3-');

const loadJson = (file: string): Record<string, unknown> => JSON.parse(readFileSync(join(dir, file), 'utf8'));
const loadState = (file: string): AgentState => JSON.parse(readFileSync(join(dir, file), 'utf8'));

function restored(saved: unknown): AgentState {
  const result = restoreState(saved);
  if (!result.isOk()) throw new Error(`expected the state to load, got: ${result.error.message}`);
  return result.value;
}

function refusal(saved: unknown): string {
  const result = restoreState(saved);
  if (result.isOk()) throw new Error('expected the state to be refused, but it loaded');
  return result.error.message;
}

describe('restoreState: states saved by v1', () => {
  it('has the four released fixtures', () => {
    expect(v1Files).toEqual([
      'state-v1-awaiting-approval.json',
      'state-v1-awaiting-context.json',
      'state-v1-awaiting-tools.json',
      'state-v1-finished.json',
    ]);
  });

  it.each(v1Files)('%s loads, with stuck memory moved under policies', (file) => {
    const saved = loadJson(file);
    const state = restored(saved);
    const { stuck, ...rest } = loadJson(file);
    expect(stuck).toBeDefined();
    expect(state).toEqual({ ...rest, schemaVersion: SCHEMA_VERSION, policies: { stuck } });
    expect(state.policies.stuck).toEqual(stuck);
    expect('stuck' in state).toBe(false);
    expect(state.status).toBe(saved.status);
    expect(state.messages).toEqual(saved.messages);
    // Migrating builds a new state; what the caller passed is left as it was.
    expect(saved).toEqual(loadJson(file));
  });
});

describe('migrations', () => {
  it('has one step for every version below the current one', () => {
    for (let version = 1; version < SCHEMA_VERSION; version++) expect(migrations[version]).toBeTypeOf('function');
    expect(migrations[SCHEMA_VERSION]).toBeUndefined();
  });

  it('1 → 2 gives empty policies to a state without stuck memory, and changes nothing it is given', () => {
    const { stuck: _stuck, ...withoutStuck } = loadJson('state-v1-finished.json');
    const frozen = Object.freeze(withoutStuck);
    const migrated = migrations[1]?.(frozen);
    expect(migrated).toEqual({ ...withoutStuck, schemaVersion: 2, policies: {} });
    expect(restored(frozen).policies).toEqual({});
  });

  it('returns a current state as the same object', () => {
    const saved = loadJson('state-v3-finished.json');
    const result = migrate(saved);
    expect(result.isOk() && result.value).toBe(saved);
  });

  it('refuses a version no release wrote', () => {
    expect(migrate({ schemaVersion: 0 })).toEqual(
      err({
        code: 'STATE_DAMAGED',
        message: 'saved state is damaged at schemaVersion: no released version of @openmanus/core wrote 0',
      }),
    );
  });
});

describe('restoreState: states saved by v2', () => {
  it('has the released fixtures', () => {
    expect(v2Files).toEqual([
      'state-v2-awaiting-approval.json',
      'state-v2-awaiting-human.json',
      'state-v2-awaiting-tools.json',
      'state-v2-failed.json',
      'state-v2-finished.json',
      'state-v2-tools.json',
    ]);
  });

  it.each(v2Files)('%s loads as the current version, nothing else changed but its error', (file) => {
    const { error: _error, ...saved } = loadJson(file);
    const { error: _migrated, ...state } = restored(loadJson(file));
    expect(state).toEqual({ ...saved, schemaVersion: SCHEMA_VERSION });
  });

  it("gives a v2 run's error, a message only, the code LEGACY", () => {
    const state = restored(loadJson('state-v2-failed.json'));
    expect(state.error).toEqual({
      code: 'LEGACY',
      message: 'the model request failed: rate_limit (HTTP 429): Rate limit reached for gpt-4o-mini',
    });
    expect(state.status).toBe('failed');
  });

  it('2 → 3 leaves a state without an error without one, and changes nothing it is given', () => {
    const saved = Object.freeze(loadJson('state-v2-finished.json'));
    const migrated = migrations[2]?.(saved);
    expect(migrated).toEqual({ ...loadJson('state-v2-finished.json'), schemaVersion: 3 });
    expect(migrated && 'error' in migrated).toBe(false);
    expect(saved).toEqual(loadJson('state-v2-finished.json'));
  });

  it('refuses a v2 error that is neither a message nor absent, naming the field', () => {
    expect(refusal({ ...loadJson('state-v2-failed.json'), error: 42 })).toContain('saved state is damaged at error');
  });
});

describe('restoreState: current states', () => {
  it('has the hand-written v3 fixtures', () => {
    expect(v3Files).toEqual([
      'state-v3-awaiting-approval.json',
      'state-v3-awaiting-human.json',
      'state-v3-awaiting-tools.json',
      'state-v3-finished.json',
      'state-v3-tools.json',
    ]);
  });

  it.each(v3Files)('%s loads unchanged, as the very object given', (file) => {
    const saved = loadJson(file);
    const state = restored(saved);
    expect(state).toBe(saved);
    expect(state).toEqual(loadJson(file));
  });

  it.each([...v1Files, ...v2Files, ...v3Files])('%s survives a JSON round trip', (file) => {
    const state = restored(loadJson(file));
    const again = restored(JSON.parse(JSON.stringify(state)));
    expect(again).toEqual(state);
  });

  it('covers progress, waiting inputs of both kinds, tools and tool data', () => {
    const calls = v3Files.flatMap((file) => loadState(file).turn?.calls ?? []);
    expect(calls.some((pending) => pending.progress !== undefined)).toBe(true);
    const waitingKinds = calls.flatMap((pending) => pending.waiting ?? []).map((input) => input.kind);
    expect(new Set(waitingKinds)).toEqual(new Set(['human', 'approval']));
    const withTools = loadState('state-v3-tools.json');
    expect(withTools.tools?.length).toBeGreaterThan(0);
    expect(withTools.toolData).toBeDefined();
  });

  it('loads what JSON leaves of undefined values: a call without args, a context gathered as nothing', () => {
    const state = loadState('state-v3-awaiting-tools.json');
    const [first, second] = state.turn?.calls ?? [];
    // The reducer answers a call whose JSON did not parse with `args: undefined`, which JSON then drops.
    const { args: _args, ...withoutArgs } = { ...first, output: 'Error: the arguments are not valid JSON.' };
    const saved = {
      ...state,
      turn: { calls: [withoutArgs, second] },
      context: { pending: [], gathered: { page: undefined } },
    };
    expect(restored(saved)).toBe(saved);
    expect(restored(JSON.parse(JSON.stringify(saved)))).toEqual(saved);
  });

  it('loads briefs on tool messages and answered calls, and refuses one that is not text', () => {
    const finished = loadState('state-v3-finished.json');
    const browsed = (brief: unknown) => ({
      ...finished,
      messages: [
        ...finished.messages,
        { role: 'assistant', content: '', toolCalls: [{ id: 'b1', name: 'browser_use', arguments: '{}' }] },
        { role: 'tool', content: 'clicked e3', toolCallId: 'b1', name: 'browser_use', brief },
      ],
    });
    const withMessage = browsed('clicked e3');
    expect(restored(withMessage)).toBe(withMessage);
    expect(refusal(browsed(7))).toMatch(/brief/);
    const waiting = loadState('state-v3-awaiting-tools.json');
    const [first, ...others] = waiting.turn?.calls ?? [];
    const withCall = {
      ...waiting,
      turn: { calls: [{ ...first, phase: 'done', output: 'clicked e4\nstate', brief: 'clicked e4' }, ...others] },
    };
    expect(restored(withCall)).toBe(withCall);
  });

  it('keeps keys it does not know instead of refusing the state', () => {
    const state = loadState('state-v3-finished.json');
    const saved = {
      ...state,
      messages: state.messages.map((message) => ({ ...message, cachedTokens: 12 })),
      savedBy: 'a newer host',
    };
    expect(restored(saved)).toBe(saved);
  });
});

describe('restoreState: refusals name the field', () => {
  const awaitingTools = loadState('state-v3-awaiting-tools.json');
  const awaitingApproval = loadState('state-v3-awaiting-approval.json');
  const awaitingContext = restored(loadJson('state-v1-awaiting-context.json'));
  const finished = loadState('state-v3-finished.json');
  const withTools = loadState('state-v3-tools.json');
  const allDone = (state: AgentState) => ({
    calls: (state.turn?.calls ?? []).map((pending) => ({ ...pending, phase: 'done', output: 'ok' })),
  });

  it.each<[string, unknown, string]>([
    ['messages: null', { ...finished, messages: null }, 'messages: expected array, received null'],
    [
      'a message with role robot',
      { ...finished, messages: [finished.messages[0], { role: 'robot', content: 'beep' }] },
      'messages[1].role: expected "system" | "user" | "assistant" | "tool", received "robot"',
    ],
    [
      'a message without content',
      { ...finished, messages: [{ role: 'user' }] },
      'messages[0].content: expected string, received undefined',
    ],
    [
      'an image without mimeType',
      { ...finished, messages: [{ role: 'user', content: 'look', image: { base64: 'AAAA' } }] },
      'messages[0].image.mimeType: expected string, received undefined',
    ],
    [
      'awaiting_tools without a turn',
      { ...awaitingTools, turn: undefined },
      'turn: a run awaiting_tools needs a turn with a call still open',
    ],
    [
      'awaiting_tools with only done calls',
      { ...awaitingTools, turn: allDone(awaitingTools) },
      'turn: a run awaiting_tools needs a turn with a call still open',
    ],
    [
      'awaiting_approval with only done calls',
      { ...awaitingApproval, turn: allDone(awaitingApproval) },
      'turn: a run awaiting_approval needs a turn with a call still open',
    ],
    [
      'a call in an unknown phase',
      { ...awaitingTools, turn: { calls: [{ ...awaitingTools.turn?.calls[1], phase: 'paused' }] } },
      'turn.calls[0].phase: expected "approval" | "human" | "running" | "done", received "paused"',
    ],
    [
      'a waiting input of an unknown kind',
      {
        ...awaitingApproval,
        turn: { calls: [{ ...awaitingApproval.turn?.calls[1], waiting: [{ kind: 'payment', effectId: 'p' }] }] },
      },
      'turn.calls[0].waiting[0].kind: expected "human" | "approval", received "payment"',
    ],
    [
      'awaiting_context without context',
      { ...awaitingContext, context: undefined },
      'context: a run awaiting_context needs a context being gathered',
    ],
    [
      'awaiting_context with nothing pending',
      { ...awaitingContext, context: { pending: [], gathered: {} } },
      'context.pending: a run awaiting_context needs a provider still pending',
    ],
    [
      'gathered context that is not a record',
      { ...withTools, context: { pending: [], gathered: [] } },
      'context.gathered: expected record, received array',
    ],
    [
      'finished without finishReason',
      { ...finished, finishReason: undefined },
      'finishReason: a finished run needs a finishReason',
    ],
    [
      'an unknown finishReason',
      { ...finished, finishReason: 'bored' },
      'finishReason: expected "answered" | "terminated" | "max_steps" | "token_limit" | "cancelled" | "error", received "bored"',
    ],
    [
      'usage.inputTokens: -1',
      { ...finished, usage: { ...finished.usage, inputTokens: -1 } },
      'usage.inputTokens: expected at least 0, received -1',
    ],
    ['step: 1.5', { ...finished, step: 1.5 }, 'step: expected an integer, received 1.5'],
    ['a step past 2^53', { ...finished, step: 2 ** 60 }, 'step: expected a safe integer, received 1152921504606847000'],
    ['an unknown status', { ...finished, status: 'sleeping' }, 'status: expected "idle" | '],
    ['policies missing', { ...finished, policies: undefined }, 'policies: expected record, received undefined'],
    [
      'taskIndex past the last message',
      { ...finished, taskIndex: 4 },
      'taskIndex: 4 is past the last message (index 3)',
    ],
    [
      'a tool message whose toolCallId matches no call',
      { ...finished, messages: finished.messages.map((m) => (m.role === 'tool' ? { ...m, toolCallId: 'nope' } : m)) },
      'messages[2].toolCallId: "nope" answers no tool call of an earlier assistant message',
    ],
    [
      'a tool message before the call it answers',
      { ...finished, messages: [finished.messages[0], finished.messages[2], finished.messages[1]] },
      'messages[1].toolCallId: "s" answers no tool call of an earlier assistant message',
    ],
    [
      'a tool spec with a timeout that is not a number',
      { ...withTools, tools: [{ ...withTools.tools?.[0], timeoutMs: '30s' }] },
      'tools[0].timeoutMs: expected number, received "30s"',
    ],
  ])('%s', (_name, saved, expected) => {
    expect(refusal(saved)).toContain(`saved state is damaged at ${expected}`);
  });

  it('refuses a newer schemaVersion before looking at anything else', () => {
    const newer =
      'saved state has schemaVersion 99, newer than this version of @openmanus/core reads (3); upgrade the package';
    expect(refusal({ ...finished, schemaVersion: 99 })).toBe(newer);
    expect(refusal({ schemaVersion: 99, messages: null })).toBe(newer);
  });

  it('refuses a missing or non-integer schemaVersion', () => {
    expect(refusal({ ...finished, schemaVersion: undefined })).toBe(
      'saved state is damaged at schemaVersion: expected an integer, received undefined',
    );
    expect(refusal({ ...finished, schemaVersion: '2' })).toBe(
      'saved state is damaged at schemaVersion: expected an integer, received "2"',
    );
    expect(refusal({ ...finished, schemaVersion: 1.5 })).toBe(
      'saved state is damaged at schemaVersion: expected an integer, received 1.5',
    );
  });

  it('refuses what is not an object', () => {
    expect(refusal(JSON.stringify(finished))).toBe(
      'a saved state must be a JSON object, received "{\\"schemaVersion\\":3,\\"runId\\":\\"run-0a9e\\",\\"s"… ' +
        '(parse the saved text with JSON.parse first)',
    );
    expect(refusal(null)).toBe('a saved state must be a JSON object, received null');
    expect(refusal(undefined)).toBe('a saved state must be a JSON object, received undefined');
    expect(refusal([finished])).toBe('a saved state must be a JSON object, received array');
  });
});

describe('restoreState: damaged at random', () => {
  const REMOVE = Symbol('remove');
  type Corruption = unknown | typeof REMOVE;
  const all = [...v1Files, ...v2Files, ...v3Files].map(loadJson);

  /** Walks `choices` into a copy of `saved` (each picks a key at its level) and damages what it reaches. */
  function corrupt(saved: unknown, choices: readonly number[], corruption: Corruption): unknown {
    const copy = structuredClone(saved);
    let node: unknown = copy;
    let parent: object | undefined;
    let key = '';
    for (const choice of choices) {
      if (typeof node !== 'object' || node === null) break;
      const keys = Object.keys(node);
      const picked = keys[choice % Math.max(keys.length, 1)];
      if (picked === undefined) break;
      parent = node;
      key = picked;
      node = Reflect.get(node, key);
    }
    if (parent === undefined) return corruption === REMOVE ? undefined : corruption;
    if (corruption !== REMOVE) Reflect.set(parent, key, corruption);
    else if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else Reflect.deleteProperty(parent, key);
    return copy;
  }

  const corruptions = fc.oneof(
    fc.constantFrom<Corruption>(null, 0, -1, 1.5, 99, '', 'x', true, [], {}, REMOVE),
    fc.anything(),
  );

  it('never throws, and every refusal names a field or the version', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...all),
        fc.array(fc.nat(), { maxLength: 8 }),
        corruptions,
        (saved, choices, corruption) => {
          const result = restoreState(corrupt(saved, choices, corruption));
          if (result.isOk()) {
            // What loads is a state by the schema's own (uncompiled) reading too.
            expect(agentStateSchema.safeParse(result.value).success).toBe(true);
          } else {
            const { code, message } = result.error;
            expect(`${code}: ${message}`).toMatch(
              /^(STATE_DAMAGED: saved state is damaged at \S+: .+|STATE_NEWER: saved state has schemaVersion \S+, newer .+|STATE_DAMAGED: a saved state must be a JSON object, received .+)$/s,
            );
            // The compiled check and zod's parser never disagree about what is damaged.
            expect(message).not.toContain('does not match the state schema');
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
