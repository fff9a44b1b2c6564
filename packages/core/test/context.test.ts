import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { ContextProvider } from '../src/kernel/context.js';
import type { AgentState } from '../src/kernel/state.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { run } from '../src/shell/run.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { startOpenAiServer } from '../src/testing/server.js';
import { defineTool } from '../src/tools/defineTool.js';
import { call, done, drive, ofType, on, replied, testConfig } from './helpers.js';

// Like Manus's browser helper: after the agent used `echo`, show it the "page" before it thinks.
const lastToolWasEcho = (state: AgentState) => {
  const last = state.messages.at(-1);
  return last?.role === 'tool' && last.name === 'echo';
};
const page: ContextProvider = {
  name: 'page',
  when: lastToolWasEcho,
  apply: (gathered, request) => {
    if (typeof gathered !== 'object' || gathered === null) return request;
    const { url, screenshot } = gathered as { url: string; screenshot: string };
    return {
      nextStepPrompt: `You are on ${url}. ${request.nextStepPrompt}`,
      messages: [
        ...request.messages,
        { role: 'user', content: 'Current page:', image: { base64: screenshot, mimeType: 'image/png' } },
      ],
    };
  },
};
const config = testConfig({ contextProviders: [page] });

describe('context providers in the reducer', () => {
  it('gather before the step that needs them, then feed the request without storing anything', () => {
    const { state: first, trace } = drive(config, 'go', [replied('', [call('echo', { text: 'x' }, 'e1')]), done('e1')]);
    expect(ofType(trace[0]?.effects ?? [], 'callLlm')).toHaveLength(1);
    expect(first.status).toBe('awaiting_context');
    expect(trace.at(-1)?.effects).toEqual([{ type: 'gatherContext', id: 'context-2-page', provider: 'page' }]);

    const [ready, effects] = on(config, first, {
      type: 'contextGathered',
      provider: 'page',
      data: { url: 'http://x.test/', screenshot: 'AAAA' },
    });
    expect(ready).toMatchObject({ status: 'awaiting_llm', step: 2 });
    const sent = ofType(effects, 'callLlm')[0]?.request.messages ?? [];
    expect(sent.at(-2)).toMatchObject({ role: 'user', content: 'Current page:', image: { base64: 'AAAA' } });
    expect(sent.at(-1)?.content).toBe('You are on http://x.test/. What next?');
    expect(ready.messages.some((m) => m.content === 'Current page:')).toBe(false);
  });

  it('a failed gathering reaches apply as undefined and the step goes on', () => {
    const { state } = drive(config, 'go', [replied('', [call('echo', {}, 'e1')]), done('e1')]);
    const [next, effects] = on(config, state, {
      type: 'contextGathered',
      provider: 'page',
      error: { code: 'CONTEXT_FAILED', message: 'browser closed' },
    });
    expect(next.status).toBe('awaiting_llm');
    expect(ofType(effects, 'callLlm')[0]?.request.messages.at(-1)?.content).toBe('What next?');
  });

  it('waits for every provider, ignores strays, resumes and cancels like any other wait', () => {
    const clock: ContextProvider = {
      name: 'clock',
      when: lastToolWasEcho,
      apply: (time, r) => ({ ...r, nextStepPrompt: `${String(time)} ${r.nextStepPrompt}` }),
    };
    const both = testConfig({ contextProviders: [page, clock] });
    const { state } = drive(both, 'go', [replied('', [call('echo', {}, 'e1')]), done('e1')]);
    expect(state.context?.pending).toEqual(['page', 'clock']);
    expect(on(both, state, { type: 'contextGathered', provider: 'weather', data: 1 })).toEqual([state, []]);
    const [half, none] = on(both, state, { type: 'contextGathered', provider: 'clock', data: 'noon' });
    expect(none).toEqual([]);
    expect(on(both, half, { type: 'resumed' })[1]).toEqual([
      { type: 'gatherContext', id: 'context-2-page', provider: 'page' },
    ]);
    const [, effects] = on(both, half, { type: 'contextGathered', provider: 'page', data: null });
    expect(ofType(effects, 'callLlm')[0]?.request.messages.at(-1)?.content).toBe('noon What next?');
    expect(on(both, half, { type: 'cancelled' })[0]).toMatchObject({ status: 'finished', finishReason: 'cancelled' });
  });

  it('the gathered context of one step is not carried into the next', () => {
    const { state } = drive(config, 'go', [
      replied('', [call('echo', {}, 'e1')]),
      done('e1'),
      { type: 'contextGathered', provider: 'page', data: { url: 'http://x.test/', screenshot: 'AAAA' } },
      replied('', [call('write', { path: '/x' }, 'w1')]),
      done('w1'),
    ]);
    expect(state.status).toBe('awaiting_llm');
    expect(state.context).toBeUndefined();
  });
});

describe('context providers in the interpreter', () => {
  it('runs the agent gatherer and sends its screenshot to a vision model', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const echo = defineTool({
      name: 'echo',
      description: 'Echo',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => text,
    });
    let gathered = 0;
    const agent = createAgent({
      name: 'browsing',
      tools: [echo],
      contextProviders: [page],
      contextGatherers: {
        page: async () => {
          gathered++;
          return { url: 'http://shop.test/', screenshot: png };
        },
      },
    });
    const server = await startOpenAiServer({
      script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { content: 'seen' }],
    });
    try {
      const result = await run(agent, 'look', {
        llm: createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, vision: true }),
      });
      expect(result.answer).toBe('seen');
      expect(gathered).toBe(1);
      const last = server.requests[1]?.messages ?? [];
      expect(last.at(-2)).toMatchObject({
        role: 'user',
        content: [{ type: 'text', text: 'Current page:' }, { type: 'image_url' }],
      });
      expect(last.at(-1)?.content).toBe('You are on http://shop.test/. ');
    } finally {
      await server.close();
    }
  });

  it('a missing or throwing gatherer does not stop the run', async () => {
    const echo = defineTool({ name: 'echo', description: 'Echo', parameters: z.object({}), execute: () => 'ok' });
    const agent = createAgent({ name: 'x', tools: [echo], contextProviders: [page] });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'echo' }] }, { content: 'fine' }]);
    expect((await run(agent, 'go', { llm })).answer).toBe('fine');
  });
});
