// Manus's python_execute, from a project that installed @openmanus/core by name: the scripted
// model asks for print(6*7), and what the tool observed is printed.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createManus, run } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';

async function main(): Promise<void> {
  const workspace = join(process.cwd(), 'workspace');
  await mkdir(workspace, { recursive: true });
  const llm = scriptedLlm([
    { toolCalls: [{ name: 'python_execute', arguments: { code: 'print(6*7)' } }] },
    { content: 'Six times seven is 42.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
  ]);
  const result = await run(createManus({ workspace }), 'What is 6*7?', { llm });
  const observation = llm.requests[1]?.messages.filter((message) => message.role === 'tool').at(-1)?.content;
  console.log(JSON.stringify({ finishReason: result.finishReason, answer: result.answer, observation }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
