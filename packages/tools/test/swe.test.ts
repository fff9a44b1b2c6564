import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createOpenAiLlm, isStepLimit, isTokenBudget, run } from '@openmanus/core';
import { processesMatching, startOpenAiServer } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { createSweAgent } from '../src/agents/swe.js';
import { tempWorkspace } from './helpers.js';

describe('the SWE agent', () => {
  it('is OpenManus’s: "swe", bash + str_replace_editor + terminate, 20 steps, a prompt with no template left in it', async () => {
    const workspace = await tempWorkspace();
    const agent = createSweAgent({ workspace });
    expect(agent.config.name).toBe('swe');
    expect(agent.policies?.find(isStepLimit)?.maxSteps).toBe(20);
    expect(agent.config.nextStepPrompt).toBe('');
    expect(agent.config.llmProfile).toBe('swe');
    expect(agent.config.tools.map((t) => t.name)).toEqual(['bash', 'str_replace_editor', 'terminate']);
    expect(agent.config.systemPrompt).toContain(workspace);
    expect(agent.config.systemPrompt).not.toMatch(/\{\{|\}\}|\{[A-Z_]+\}/);
    expect(agent.policies?.some(isTokenBudget)).toBe(false);
    expect(createSweAgent({ workspace, maxInputTokens: 4000 }).policies?.find(isTokenBudget)?.maxInputTokens).toBe(
      4000,
    );
  });

  it('edits a file with the editor, runs it with bash, and finishes', async () => {
    const workspace = await tempWorkspace();
    const script = join(workspace, 'greet.py');
    const server = await startOpenAiServer({
      script: [
        {
          content: 'I will write the script first.',
          toolCalls: [
            {
              name: 'str_replace_editor',
              arguments: { command: 'create', path: script, file_text: 'import sys\nprint("hello", sys.argv[1])\n' },
            },
          ],
        },
        {
          content: 'Now greet with a capital.',
          toolCalls: [
            {
              name: 'str_replace_editor',
              arguments: {
                command: 'str_replace',
                path: script,
                old_str: 'sys.argv[1]',
                new_str: 'sys.argv[1].title()',
              },
            },
          ],
        },
        { content: 'Run it.', toolCalls: [{ name: 'bash', arguments: { command: 'python3 greet.py world' } }] },
        {
          content: 'greet.py prints "hello World".',
          toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }],
        },
      ],
    });
    try {
      const llm = createOpenAiLlm({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
      const result = await run(createSweAgent({ workspace }), 'Write greet.py that greets its argument', { llm });
      expect(result.finishReason).toBe('terminated');
      expect(await readFile(script, 'utf8')).toBe('import sys\nprint("hello", sys.argv[1].title())\n');
      const last = server.requests.at(-1)?.messages ?? [];
      expect(last[0]).toMatchObject({ role: 'system', content: expect.stringContaining(workspace) });
      expect(last.filter((m) => m.role === 'tool').at(-1)?.content).toBe('hello World\n[exit code 0]');
      expect(processesMatching(workspace)).toEqual([]);
      server.assertConsumed();
    } finally {
      await server.close();
    }
  });
});
