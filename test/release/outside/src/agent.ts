// A scripted agent with a tool of @openmanus/tools (file_saver) and core's terminate. One source
// for both outside projects: TypeScript compiles it to import or to require by the project's type.
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAgent, run, terminate } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { createFileSaver } from '@openmanus/tools';

async function main(): Promise<void> {
  const workspace = join(process.cwd(), 'workspace');
  await mkdir(workspace, { recursive: true });
  const agent = createAgent({ name: 'writer', tools: [createFileSaver(), terminate] });
  const llm = scriptedLlm([
    { toolCalls: [{ name: 'file_saver', arguments: { file_path: 'note.md', content: 'saved from outside\n' } }] },
    { content: 'Saved the note.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
  ]);
  const result = await run(agent, 'Save a note', { llm, workspace });
  const note = await readFile(join(workspace, 'note.md'), 'utf8');
  console.log(JSON.stringify({ finishReason: result.finishReason, answer: result.answer, note }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
