import { mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { hasErrorCode, OpenManusError } from '../errors.js';

/** Thrown for a path a tool must not touch; its message is shown to the model. */
export class WorkspaceError extends OpenManusError<'PATH_REFUSED'> {
  static readonly codes = ['PATH_REFUSED'] as const;
  override readonly name = 'WorkspaceError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('PATH_REFUSED', message, options);
  }
  static override isInstance(value: unknown): value is WorkspaceError {
    return hasErrorCode(value, WorkspaceError.codes);
  }
}

/** Whether `target` is `root` or below it (both absolute, normalized). */
export const inside = (root: string, target: string) => {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/** The deepest existing ancestor of `path`, with symlinks resolved. */
async function realExisting(path: string): Promise<{ real: string; rest: string }> {
  let current = path;
  for (;;) {
    try {
      const real = await realpath(current);
      return { real, rest: relative(current, path) };
    } catch {
      const parent = dirname(current);
      if (parent === current) return { real: current, rest: relative(current, path) };
      current = parent;
    }
  }
}

/**
 * Resolves a path a tool was given and refuses anything outside the workspace: `..`,
 * symlinks pointing out, and absolute paths elsewhere alike. Returns the real path to use.
 * This is a check made before the operation: whatever then opens the path must check again what
 * it opened (see confinedFile.ts), since the path can change in between.
 */
export async function confine(workspace: string, path: string): Promise<string> {
  return (await confineIn(workspace, path)).target;
}

/** As `confine`, with the workspace's real path (`root`) as well. */
export async function confineIn(workspace: string, path: string): Promise<{ root: string; target: string }> {
  if (!isAbsolute(path)) throw new WorkspaceError(`The path ${path} is not an absolute path.`);
  // A fresh workspace may not exist yet: it is made on first use, as python_execute does.
  await mkdir(workspace, { recursive: true });
  const root = await realpath(workspace);
  const { real, rest } = await realExisting(resolve(path));
  const target = resolve(real, rest);
  if (!inside(root, target)) throw outsideError(path, root);
  return { root, target };
}

export const outsideError = (path: string, root: string) =>
  new WorkspaceError(`The path ${path} is outside the workspace ${root}; only files inside it can be used.`);
