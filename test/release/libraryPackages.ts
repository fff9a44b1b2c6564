// The library packages (packages/*) as a user meets them: every module name their exports give and
// the Node versions their engines admit. A view of workspace.ts's list, which also has the CLI.
import { join } from 'node:path';
import { repoRoot, workspacePackages } from './workspace.js';

export interface LibraryPackage {
  readonly name: string;
  /** Its folder, absolute. */
  readonly dir: string;
  /** Every module name its exports give: `@openmanus/core`, `@openmanus/core/kernel`, … */
  readonly entries: readonly string[];
  /** Its `engines.node`. */
  readonly nodeRange: string;
}

export const libraryPackages: readonly LibraryPackage[] = workspacePackages()
  .filter(({ dir }) => dir.startsWith('packages/'))
  .map(({ dir, manifest }) => {
    if (manifest.exports === undefined || manifest.engines?.node === undefined) {
      throw new Error(`${dir}/package.json needs exports and engines.node`);
    }
    const entries = Object.keys(manifest.exports).map((subpath) => manifest.name + subpath.slice(1));
    return { name: manifest.name, dir: join(repoRoot, dir), entries, nodeRange: manifest.engines.node };
  });
