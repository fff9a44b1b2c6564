import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type AgentEvent, type AgentState, isFinal, restoreState, step } from '../src/index.js';
import { testConfig } from './helpers.js';

// States saved by released versions. Never edit or delete one: every later version must load them.
const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const saved = readdirSync(dir).filter((f) => f.startsWith('state-v') && f.endsWith('.json'));

describe('saved states of earlier versions', () => {
  it('there are fixtures to check', () => {
    expect(saved.length).toBeGreaterThanOrEqual(2);
  });

  it.each(saved)('%s loads and runs to the end', (file) => {
    const restored = restoreState(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    if (!restored.ok) throw new Error(restored.error);
    const config = testConfig();
    let [state, effects] = step(config, restored.state, { type: 'resumed' });
    for (let i = 0; i < 20 && !isFinal(state); i++) {
      const next = effects.find((e) => e.type !== 'emit');
      let event: AgentEvent;
      if (next?.type === 'callLlm') event = { type: 'llmResponded', content: 'finished from fixture', toolCalls: [] };
      else if (next?.type === 'callTool') event = { type: 'toolCompleted', callId: next.call.id, output: 'ok' };
      else if (next?.type === 'askHuman') event = { type: 'humanReplied', callId: next.callId, answer: 'ok' };
      else if (next?.type === 'requestApproval') event = { type: 'approvalGiven', callId: next.call.id };
      else if (next?.type === 'gatherContext') event = { type: 'contextGathered', provider: next.provider, data: null };
      else if (state.status === 'finished') break;
      else event = { type: 'started', input: 'go on' };
      [state, effects] = step(config, state, event);
    }
    if (isFinal(restored.state)) [state] = step(config, state, { type: 'started', input: 'one more thing' });
    expect(state.messages.length).toBeGreaterThan(restored.state.messages.length);
  });

  it('refuses a state from an unknown schema version with the reason', () => {
    const result = restoreState({ schemaVersion: 99, status: 'idle', messages: [], step: 0, requestSeq: 0 } satisfies
      | Partial<AgentState>
      | object);
    expect(result).toEqual({ ok: false, error: 'unsupported state schemaVersion 99 (this version reads 1)' });
  });
});
