import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import { run } from '../src/shell/run.js';
import type { Sandbox, SandboxProvider } from '../src/shell/sandboxPort.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { defineTool } from '../src/tools/defineTool.js';
import { terminate } from '../src/tools/terminate.js';

/** A provider that records what it was asked for; its sandboxes only know their ids. */
function recordingProvider() {
  const created: string[] = [];
  const closed: string[] = [];
  const provider: SandboxProvider = {
    name: 'recording',
    create: async ({ runId, workspace }) => {
      created.push(`${runId}:${workspace}`);
      return {
        provider: 'recording',
        workspace: `/sandbox/${runId}`,
        close: async () => void closed.push(runId),
      } as unknown as Sandbox;
    },
  };
  return { provider, created, closed };
}

const whereTool = defineTool({
  name: 'where',
  description: 'Says where the tool runs.',
  parameters: z.object({}),
  execute: async (_args, scope) => {
    if (!scope.sandbox) return 'host';
    const [first, second] = await Promise.all([scope.sandbox(), scope.sandbox()]);
    return first === second ? first.workspace : 'two sandboxes';
  },
});
const agent = createAgent({ name: 'a', tools: [whereTool, terminate] });
const script = () =>
  scriptedLlm([
    { toolCalls: [{ name: 'where', arguments: {} }] },
    { toolCalls: [{ name: 'where', arguments: {} }] },
    { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
  ]);
const outputs = (llm: ReturnType<typeof scriptedLlm>) =>
  llm.requests.flatMap((r) => r.messages.filter((m) => m.role === 'tool').map((m) => m.content)).slice(-2);

describe("the run's sandbox", () => {
  it('is made once per run on first use, shared by its calls, and removed when the run ends', async () => {
    const { provider, created, closed } = recordingProvider();
    const llm = script();
    await run(agent, 'Where?', { llm, sandbox: provider, runId: 'r1', workspace: '/w' });
    expect(outputs(llm)).toEqual(['/sandbox/r1', '/sandbox/r1']);
    expect(created).toEqual(['r1:/w']);
    expect(closed).toEqual(['r1']);
  });

  it('is not there without a provider: tools run on the host', async () => {
    const llm = script();
    await run(agent, 'Where?', { llm });
    expect(outputs(llm)).toEqual(['host', 'host']);
  });

  it('is one per run: two runs at once get two sandboxes', async () => {
    const { provider, created, closed } = recordingProvider();
    await Promise.all(['a', 'b'].map((runId) => run(agent, 'Where?', { llm: script(), sandbox: provider, runId })));
    expect(created.sort()).toEqual(['a:undefined', 'b:undefined']);
    expect(closed.sort()).toEqual(['a', 'b']);
  });
});
