import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalSandboxProvider, createOpenAiLlm, run, type Sandbox, type SandboxProvider } from '@openmanus/core';
import { processesMatching, startOpenAiServer } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { createSandboxManus } from '../src/agents/sandboxManus.js';
import { tempWorkspace } from './helpers.js';

/** The local provider, with a record of what its sandboxes were asked to do. */
function recording(inner: SandboxProvider) {
  const calls: string[] = [];
  const sandboxes: Sandbox[] = [];
  const provider: SandboxProvider = {
    name: inner.name,
    async create(request) {
      const sandbox = await inner.create(request);
      sandboxes.push(sandbox);
      calls.push(`create ${request.runId}`);
      return {
        ...sandbox,
        exec: (command, options) => {
          calls.push(`exec ${command[0]}`);
          return sandbox.exec(command, options);
        },
        spawn: (command, options) => {
          calls.push(`spawn ${command[0]}`);
          return sandbox.spawn(command, options);
        },
        readFile: (path) => {
          calls.push(`readFile ${path}`);
          return sandbox.readFile(path);
        },
        writeFile: (path, data) => {
          calls.push(`writeFile ${path}`);
          return sandbox.writeFile(path, data);
        },
        close: async () => {
          calls.push(`close ${request.runId}`);
          await sandbox.close();
        },
      };
    },
  };
  return { provider, calls, sandboxes };
}

const llmOf = (baseURL: string) => createOpenAiLlm({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL, maxRetries: 0 });
const toolOutputs = (messages: readonly { role: string; content?: unknown }[]) =>
  messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('SandboxManus', () => {
  it("has Manus's tools and bash, all working in one sandbox per run, removed when the run ends", async () => {
    const workspace = await tempWorkspace();
    const script = join(workspace, 'greet.py');
    const { provider, calls } = recording(createLocalSandboxProvider({ workspace }));
    const agent = createSandboxManus({ sandbox: provider, workspace });
    expect(agent.config.tools.map((t) => t.name)).toEqual([
      'python_execute',
      'str_replace_editor',
      'ask_human',
      'terminate',
      'bash',
      'sandbox_vision',
    ]);
    const server = await startOpenAiServer({
      script: [
        {
          toolCalls: [
            { name: 'python_execute', arguments: { code: 'open("greet.py", "w").write("print(\'hello\')\\n")' } },
          ],
        },
        { toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: script } }] },
        {
          toolCalls: [
            {
              name: 'str_replace_editor',
              arguments: { command: 'str_replace', path: script, old_str: "'hello'", new_str: "'hello, sandbox'" },
            },
          ],
        },
        { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 300.4242 > /dev/null 2>&1 & echo started' } }] },
        { toolCalls: [{ name: 'bash', arguments: { command: 'python3 greet.py' } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    try {
      const outcome = await run(agent, 'Write greet.py, fix its greeting, run it', { llm: llmOf(server.baseURL) });
      expect(outcome.finishReason).toBe('terminated');
      const outputs = toolOutputs(server.requests.at(-1)?.messages ?? []);
      expect(outputs[0]).toBe('Execution finished with no output.');
      expect(outputs[1]).toContain("     1\tprint('hello')");
      expect(outputs[2]).toMatch(/^The file .*greet\.py has been edited/);
      expect(outputs[3]).toBe('started\n[exit code 0]');
      expect(outputs[4]).toBe('hello, sandbox\n[exit code 0]');
      expect(await readFile(script, 'utf8')).toBe("print('hello, sandbox')\n");
      // Python through exec, the editor through the sandbox's files, bash through spawn; one sandbox.
      expect(calls.filter((c) => c.startsWith('create'))).toHaveLength(1);
      expect(calls).toContain('exec python3');
      expect(calls).toContain(`readFile ${script}`);
      expect(calls).toContain(`writeFile ${script}`);
      expect(calls.filter((c) => c.startsWith('spawn'))).toEqual(['spawn /bin/bash']);
      // Removed with everything it ran when the run ended.
      expect(calls.at(-1)).toMatch(/^close /);
      expect(processesMatching('sleep 300.4242')).toEqual([]);
      server.assertConsumed();
    } finally {
      await server.close();
    }
  });

  it('two runs at once, two sandboxes: neither sees the other’s files', async () => {
    const { provider, sandboxes } = recording(createLocalSandboxProvider());
    const runOne = async (name: string) => {
      const server = await startOpenAiServer({
        script: [
          { toolCalls: [{ name: 'python_execute', arguments: { code: `open("${name}.txt", "w").write("${name}")` } }] },
          { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 0.3; ls' } }] },
          { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
        ],
      });
      try {
        await run(createSandboxManus({ sandbox: provider }), 'Write your file and list', {
          llm: llmOf(server.baseURL),
        });
        return toolOutputs(server.requests.at(-1)?.messages ?? [])[1];
      } finally {
        await server.close();
      }
    };
    const [first, second] = await Promise.all([runOne('first'), runOne('second')]);
    expect(first).toBe('first.txt\n[exit code 0]');
    expect(second).toBe('second.txt\n[exit code 0]');
    expect(sandboxes).toHaveLength(2);
    // Each run's temporary workspace went with its sandbox.
    for (const sandbox of sandboxes) expect(existsSync(sandbox.workspace)).toBe(false);
  });
});
