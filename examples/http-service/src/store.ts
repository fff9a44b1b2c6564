import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AgentState, restore } from '@openmanus/core';

/** Run states as JSON files, one per run, replaced atomically: enough to survive a restart. */
export class FileStore {
  constructor(private readonly dir: string) {}

  async save(id: string, state: AgentState): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, `${id}.json`);
    await writeFile(`${path}.tmp`, JSON.stringify(state));
    await rename(`${path}.tmp`, path);
  }

  async load(id: string): Promise<AgentState | undefined> {
    const text = await readFile(join(this.dir, `${id}.json`), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    return restore(JSON.parse(text)).catch((error: unknown) => {
      throw new Error(`run ${id}: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  async ids(): Promise<string[]> {
    const files = await readdir(this.dir).catch(() => []);
    return files.filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length));
  }
}
