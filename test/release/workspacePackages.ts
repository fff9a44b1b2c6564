// The packages we publish with entries (packages/*), as a user names them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface WorkspacePackage {
  readonly name: string;
  readonly dir: string;
  /** Every module name its exports give: `@openmanus/core`, `@openmanus/core/kernel`, … */
  readonly entries: readonly string[];
  /** Its `engines.node`. */
  readonly nodeRange: string;
}

export const workspacePackages: readonly WorkspacePackage[] = readdirSync(join(repoRoot, 'packages')).map((folder) => {
  const dir = join(repoRoot, 'packages', folder);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    exports: Readonly<Record<string, unknown>>;
    engines: { node: string };
  };
  const entries = Object.keys(manifest.exports).map((subpath) => manifest.name + subpath.slice(1));
  return { name: manifest.name, dir, entries, nodeRange: manifest.engines.node };
});
