import { resolve } from 'node:path';

/**
 * The directory a tool works in: the one it was created with (already resolved), else the run's
 * workspace, else `./workspace`, as Manus's default.
 */
export const workspaceOf = (configured: string | undefined, scope: { readonly workspace?: string }): string =>
  configured ?? resolve(scope.workspace ?? 'workspace');
