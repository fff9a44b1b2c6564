import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isStepLimit, isTokenBudget } from '../src/kernel/policies.js';
import { createManus } from '../src/manus/manus.js';
import { run } from '../src/shell/run.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { defineTool } from '../src/tools/defineTool.js';
import { tempWorkspace } from './toolHelpers.js';

describe('createManus', () => {
  it("has OpenManus's defaults and its four tools, and names the workspace", async () => {
    const workspace = await tempWorkspace();
    const manus = createManus({ workspace });
    expect(manus.config).toMatchObject({
      name: 'Manus',
      maxObserve: 10_000,
      toolChoice: 'auto',
      llmProfile: 'manus',
    });
    // OpenManus's 20 steps, as the step limit among its policies; no token budget unless asked for.
    expect(manus.policies?.map((p) => p.name)).toEqual(['stepLimit', 'stuck', 'terminalTools']);
    expect(manus.policies?.find(isStepLimit)?.maxSteps).toBe(20);
    const budgeted = createManus({ workspace, maxInputTokens: 8_000 });
    expect(budgeted.policies?.find(isTokenBudget)?.maxInputTokens).toBe(8_000);
    expect(manus.config.tools.map((t) => t.name)).toEqual([
      'python_execute',
      'str_replace_editor',
      'ask_human',
      'terminate',
    ]);
    expect(manus.config.systemPrompt).toContain(`Your workspace directory is ${workspace}.`);
    expect(manus.config.nextStepPrompt).toContain('terminate');
  });

  it('does a task with real tools and leaves the deliverable in the workspace', async () => {
    const workspace = await tempWorkspace();
    const path = join(workspace, 'out', 'hello.md');
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'python_execute', arguments: { code: 'print(sum(range(10)))' } }] },
      { toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'create', path, file_text: '# 45\n' } }] },
      { content: `Wrote ${path}.`, toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const result = await run(createManus({ workspace }), 'sum 0..9 into a file', { llm });
    expect(result).toMatchObject({ finishReason: 'terminated', answer: `Wrote ${path}.` });
    expect(llm.requests[1]?.messages.filter((m) => m.role === 'tool').at(-1)?.content).toBe('45');
    expect(await readFile(path, 'utf8')).toBe('# 45\n');
  });

  it('gates the tools named in approvals and adds extra tools', async () => {
    const workspace = await tempWorkspace();
    const clock = defineTool({ name: 'clock', description: 'Time', parameters: z.object({}), execute: () => 'noon' });
    const manus = createManus({ workspace, approvals: ['python_execute'], extraTools: [clock], maxSteps: 7 });
    expect(manus.config.tools.at(-1)?.name).toBe('clock');
    expect(manus.policies?.find(isStepLimit)?.maxSteps).toBe(7);
    expect(manus.policies?.map((p) => p.name)).toEqual(['stepLimit', 'stuck', 'terminalTools', 'requireApproval']);
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'python_execute', arguments: { code: 'open("ran.txt","w")' } }] },
      { content: 'Not allowed, stopping.' },
    ]);
    await run(manus, 'write a file', { llm, onApproval: () => ({ approved: false, reason: 'read-only today' }) });
    expect(existsSync(join(workspace, 'ran.txt'))).toBe(false);
    expect(llm.requests[1]?.messages.at(-2)?.content).toBe(
      'Error: the user did not approve this call: read-only today',
    );
  });
});
