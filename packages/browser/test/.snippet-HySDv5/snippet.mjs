import { createBrowserUse } from '@openmanus/browser';
import { createAgent, run, terminate } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';

// Public sites need no options; a server on this machine or its network must be named.
const browserUse = createBrowserUse({ allowHosts: ['127.0.0.1:37073'] });
const agent = createAgent({ name: 'browser', tools: [browserUse, terminate] });

const llm = scriptedLlm([
  {
    toolCalls: [
      { name: 'browser_use', arguments: { action: 'go_to_url', url: 'http://127.0.0.1:37073/travel/kyoto.html' } },
    ],
  },
  { toolCalls: [{ name: 'browser_use', arguments: { action: 'find', text: 'yen' } }] },
  { content: 'Kinkaku-ji costs 500 yen.' },
]);
const result = await run(agent, 'What does Kinkaku-ji cost?', { llm });
for (const message of llm.requests.at(-1).messages) {
  if (message.role === 'tool') console.log(`${message.content}\n`);
}
console.log(result.answer);
