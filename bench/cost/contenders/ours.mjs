// Ours on the cost tasks: createAgent's defaults (only the step limit raised, as for every peer), and
// the demo's own agent (Manus with the browser) for the browsing task.
import { findChrome, withBrowser } from '@openmanus/browser';
import { createAgent, createManus, createOpenAiLlm, defaultPolicies, defineTool, run } from '@openmanus/core';
import { z } from 'zod';
import { observe, researchTools, STEP_LIMIT, systemPrompt, task } from '../research.mjs';

const llmAt = (baseURL, model) => createOpenAiLlm({ model, apiKey: 'bench', baseURL, maxRetries: 0 });

export async function research({ baseURL, model }) {
  const tools = researchTools.map(({ name, description, argument }) =>
    defineTool({
      name,
      description,
      parameters: z.object({ [argument]: z.string() }),
      execute: (args) => observe(name, args),
    }),
  );
  const agent = createAgent({
    name: 'research',
    systemPrompt,
    tools,
    policies: defaultPolicies({ maxSteps: STEP_LIMIT }),
  });
  return (await run(agent, task, { llm: llmAt(baseURL, model) })).answer;
}

/** The demo's travel case as examples/cli/src/demo.ts builds it offline (no config: the browser's defaults). */
export async function demo({ baseURL, model, siteUrl, workspace }) {
  const { travelTask } = await import('../../../examples/cli/dist/demo.js');
  const browser = { chromeInstancePath: findChrome(undefined, process.env) };
  const agent = withBrowser(createManus({ workspace }), { ...browser, allowHosts: [new URL(siteUrl).host] });
  return (await run(agent, travelTask(siteUrl, workspace), { llm: llmAt(baseURL, model) })).answer;
}
