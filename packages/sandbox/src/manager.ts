// OpenManus's SandboxManager as a provider around another one: at most N sandboxes at once, and
// sandboxes idle for too long closed by a periodic cleanup.
import { randomUUID } from 'node:crypto';
import type { Sandbox, SandboxProvider, SandboxRequest } from '@openmanus/core';

export interface SandboxManagerOptions {
  /** Most sandboxes open at once (OpenManus: 100). */
  readonly maxSandboxes?: number;
  /** A sandbox unused for this long is closed by the next cleanup (OpenManus: 3600 s). */
  readonly idleTimeoutMs?: number;
  /** How often idle sandboxes are looked for (OpenManus: 300 s). */
  readonly cleanupIntervalMs?: number;
}

/** A sandbox the manager tracks, by an id of its own. */
export type ManagedSandbox = Sandbox & { readonly id: string };

export interface SandboxManager extends SandboxProvider {
  readonly maxSandboxes: number;
  create(request: SandboxRequest): Promise<ManagedSandbox>;
  /** The open sandbox with this id; throws `Sandbox <id> not found` for any other. */
  get(id: string): ManagedSandbox;
  /** The ids of the open sandboxes. */
  ids(): string[];
  /** Closes one sandbox (unknown ids are ignored). */
  delete(id: string): Promise<void>;
  /** Closes the sandboxes idle for longer than the idle timeout (none is closed in the middle of a call). */
  cleanupIdle(): Promise<void>;
  /** Closes every sandbox and stops the periodic cleanup. */
  close(): Promise<void>;
}

interface Entry {
  readonly sandbox: ManagedSandbox;
  lastUsed: number;
  busy: number;
}

export function createSandboxManager(provider: SandboxProvider, options: SandboxManagerOptions = {}): SandboxManager {
  const maxSandboxes = options.maxSandboxes ?? 100;
  const idleTimeoutMs = options.idleTimeoutMs ?? 3_600_000;
  const entries = new Map<string, Entry>();
  let starting = 0;

  const timer = setInterval(() => void cleanupIdle().catch(() => {}), options.cleanupIntervalMs ?? 300_000);
  timer.unref();

  /** Marks the sandbox used for as long as `task` runs. */
  const using = async <T>(entry: Entry, task: () => Promise<T>): Promise<T> => {
    entry.busy++;
    entry.lastUsed = Date.now();
    try {
      return await task();
    } finally {
      entry.busy--;
      entry.lastUsed = Date.now();
    }
  };

  const remove = async (id: string) => {
    const entry = entries.get(id);
    if (!entry) return;
    entries.delete(id);
    await entry.sandbox.close();
  };

  const create = async (request: SandboxRequest): Promise<ManagedSandbox> => {
    if (entries.size + starting >= maxSandboxes)
      throw new Error(`Maximum number of sandboxes (${maxSandboxes}) reached`);
    starting++;
    let inner: Sandbox;
    try {
      inner = await provider.create(request);
    } finally {
      starting--;
    }
    const id = randomUUID();
    let closing: Promise<void> | undefined;
    const sandbox: ManagedSandbox = {
      id,
      provider: inner.provider,
      workspace: inner.workspace,
      exec: (command, execOptions) => using(entry, () => inner.exec(command, execOptions)),
      spawn: (command, spawnOptions) => using(entry, () => inner.spawn(command, spawnOptions)),
      readFile: (path, readOptions) => using(entry, () => inner.readFile(path, readOptions)),
      writeFile: (path, data) => using(entry, () => inner.writeFile(path, data)),
      list: (path) => using(entry, () => inner.list(path)),
      remove: (path) => using(entry, () => inner.remove(path)),
      copyIn: (hostPath, sandboxPath) => using(entry, () => inner.copyIn(hostPath, sandboxPath)),
      copyOut: (sandboxPath, hostPath) => using(entry, () => inner.copyOut(sandboxPath, hostPath)),
      close: () => {
        entries.delete(id);
        closing ??= inner.close();
        return closing;
      },
    };
    const entry: Entry = { sandbox, lastUsed: Date.now(), busy: 0 };
    entries.set(id, entry);
    return sandbox;
  };

  const cleanupIdle = async () => {
    const now = Date.now();
    const idle = [...entries].filter(([, entry]) => entry.busy === 0 && now - entry.lastUsed > idleTimeoutMs);
    await Promise.all(idle.map(([id]) => remove(id)));
  };

  return {
    name: provider.name,
    maxSandboxes,
    create,
    get: (id) => {
      const entry = entries.get(id);
      if (!entry) throw new Error(`Sandbox ${id} not found`);
      entry.lastUsed = Date.now();
      return entry.sandbox;
    },
    ids: () => [...entries.keys()],
    delete: remove,
    cleanupIdle,
    close: async () => {
      clearInterval(timer);
      await Promise.all([...entries.keys()].map(remove));
    },
  };
}
