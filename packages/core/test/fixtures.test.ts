import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../src/kernel/events.js';
import { pendingInputs, step } from '../src/kernel/reducer.js';
import { isFinal } from '../src/kernel/state.js';
import { restore } from '../src/shell/restore.js';
import { testConfig } from './helpers.js';

// States saved by released versions. Never edit or delete one: every later version must load them.
const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const saved = readdirSync(dir).filter((f) => f.startsWith('state-v') && f.endsWith('.json'));

describe('saved states of earlier versions', () => {
  it('there are fixtures to check', () => {
    expect(saved.length).toBeGreaterThanOrEqual(2);
  });

  it.each(saved)('%s loads and runs to the end', async (file) => {
    const restored = await restore(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    const config = testConfig();
    let [state, effects] = step(config, restored, { type: 'resumed' });
    // Effects not answered yet, oldest first: every one gets its answer, as the shell would give it.
    const open = [...effects];
    for (let i = 0; i < 30 && !isFinal(state); i++) {
      const next = open.shift();
      let event: AgentEvent | undefined;
      if (next?.type === 'callLlm')
        event = { type: 'llmResponded', effectId: next.id, content: 'finished from fixture', toolCalls: [] };
      else if (next?.type === 'callTool') event = { type: 'toolCompleted', effectId: next.id, output: 'ok' };
      else if (next?.type === 'askHuman') event = { type: 'humanReplied', effectId: next.id, answer: 'ok' };
      else if (next?.type === 'requestApproval') event = { type: 'approvalGiven', effectId: next.id };
      else if (next?.type === 'gatherContext') event = { type: 'contextGathered', effectId: next.id, data: null };
      else if (next) continue;
      else {
        // Nothing in flight: the run waits for a person (possibly for a tool paused on one).
        const [input] = pendingInputs(config, state);
        if (!input) event = { type: 'started', input: 'go on' };
        else if (input.kind === 'human') event = { type: 'humanReplied', effectId: input.effectId, answer: 'ok' };
        else event = { type: 'approvalGiven', effectId: input.effectId };
      }
      [state, effects] = step(config, state, event);
      open.push(...effects);
    }
    if (isFinal(restored)) [state] = step(config, state, { type: 'started', input: 'one more thing' });
    expect(state.messages.length).toBeGreaterThan(restored.messages.length);
  });

  it('refuses a state from a newer schema version before anything runs', async () => {
    await expect(restore({ schemaVersion: 99, status: 'idle', messages: [], step: 0, requestSeq: 0 })).rejects.toThrow(
      /schemaVersion 99, newer/,
    );
  });
});
