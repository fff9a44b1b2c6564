import { initialStep, run, step } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { cityAgent } from '../src/agent.js';

describe('the cities agent', () => {
  // #region first-test
  it('looks both cities up before answering', async () => {
    const llm = scriptedLlm([
      {
        toolCalls: [
          { name: 'lookup_population', arguments: { city: 'Kyoto' } },
          { name: 'lookup_population', arguments: { city: 'Osaka' } },
        ],
      },
      { content: 'Osaka is bigger.' },
    ]);
    const result = await run(cityAgent, 'Kyoto or Osaka?', { llm });
    expect(result.answer).toBe('Osaka is bigger.');
    llm.assertConsumed();
    const observations = llm.requests[1]?.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(observations).toEqual(['Kyoto: 1463723', 'Osaka: 2752412']);
  });
  // #endregion first-test

  it('asks for the tool calls the model wants, as data (no model, no I/O)', () => {
    const [state] = initialStep(cityAgent.config, 'How many people live in Nara?');
    const [, effects] = step(cityAgent.config, state, {
      type: 'llmResponded',
      effectId: 'llm-1',
      content: '',
      toolCalls: [{ id: 'c1', name: 'lookup_population', arguments: '{"city":"Nara"}' }],
    });
    expect(effects).toEqual([expect.objectContaining({ type: 'callTool', args: { city: 'Nara' } })]);
  });

  it('runs offline end to end through the real HTTP server', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const main = new URL('../dist/main.js', import.meta.url).pathname;
    const env = { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
    const { stdout } = await promisify(execFile)(process.execPath, [main], { env });
    expect(stdout).toContain('[offline, recorded model]');
    expect(stdout).toContain('Osaka has more people');
    expect(stdout).toContain('(answered, 2 model calls)');
  });
});
