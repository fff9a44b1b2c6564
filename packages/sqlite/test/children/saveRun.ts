// Another program on the database: loads a run and saves it with one more message, `attempts`
// times, each expecting the version it loaded (or `expected`, when given). Prints what it saved.
// It prints "ready" and starts once a line comes on its standard input, so several start together.
import { once } from 'node:events';
import { createSqliteStore } from '../../src/sqliteStore.js';

const [file = '', runId = '', marker = '', attempts = '1', expected] = process.argv.slice(2);
const store = createSqliteStore(file);
const saved: string[] = [];
console.log('ready');
await once(process.stdin, 'data');
let conflicts = 0;
for (let attempt = 0; attempt < Number(attempts); attempt++) {
  const stored = await store.load(runId);
  if (!stored) throw new Error(`run ${runId} is not stored`);
  const content = `${marker} ${attempt}`;
  const next = { ...stored.state, messages: [...stored.state.messages, { role: 'user' as const, content }] };
  try {
    await store.save(runId, next, expected === undefined ? stored.version : Number(expected));
    saved.push(content);
  } catch (error) {
    if ((error as Error).name !== 'CheckpointConflictError') throw error;
    conflicts++;
  }
}
store.close();
console.log(JSON.stringify({ saved, conflicts }));
process.stdin.destroy();
