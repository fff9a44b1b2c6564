import { rm } from 'node:fs/promises';
import { createManus, createOpenAiLlm, run } from '@openmanus/core';
import { startOpenAiServer } from '@openmanus/core/testing';
import { expect, it } from 'vitest';
import { bingEngine } from '../src/search/bing.js';
import { createWebSearch } from '../src/search/webSearch.js';
import { tempWorkspace } from './helpers.js';
import { fixture, send, startWebServer } from './webServer.js';

it('Manus, given web_search, searches (a recorded Bing page on a local server) and answers from the results', async () => {
  const bing = await startWebServer(send(fixture('bing-page1.html')));
  const model = await startOpenAiServer({
    script: [
      { toolCalls: [{ name: 'web_search', arguments: { query: 'node.js event loop', num_results: 3 } }] },
      { content: 'The event loop lets Node.js do non-blocking I/O (see nodejs.org).' },
    ],
  });
  const workspace = await tempWorkspace();
  try {
    const webSearch = createWebSearch({ engines: [bingEngine({ baseUrl: bing.url })], retryDelaySec: 0.01 });
    const manus = createManus({ workspace, extraTools: [webSearch] });
    const llm = createOpenAiLlm({ model: 'scripted-model', apiKey: 'test-key', baseURL: model.baseURL });
    const result = await run(manus, 'What does the Node.js event loop do?', { llm });

    expect(result.finishReason).toBe('answered');
    expect(result.answer).toBe('The event loop lets Node.js do non-blocking I/O (see nodejs.org).');
    const offered = model.requests[0]?.tools as { function: { name: string; parameters: { required?: string[] } } }[];
    expect(offered.find((tool) => tool.function.name === 'web_search')?.function.parameters.required).toEqual([
      'query',
    ]);
    const observation = model.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(observation?.content).toMatch(
      /^Search results for 'node\.js event loop':\n\n1\. The Node\.js Event Loop\n {3}URL: https:\/\/nodejs\.org\/en\/learn\/asynchronous-work\/event-loop-timers-and-nexttick\n/,
    );
    expect(observation?.content).toContain('- Total results: 3\n- Language: en\n- Country: us\n- Engine: bing');
    expect(bing.requests[0]?.query.get('q')).toBe('node.js event loop');
    model.assertConsumed();
  } finally {
    await Promise.all([bing.close(), model.close(), rm(workspace, { recursive: true, force: true })]);
  }
});
