// Install footprint: the packages a library brings into an empty project, and their size on disk.
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

function sizeOf(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += sizeOf(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/** Node's lookup: node_modules of the package's folder and of every folder above it. */
function resolvePackage(from, name) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

/** Packages and bytes of `names` and everything they need (dependencies and the peers npm would install). */
export function footprint(fromDir, names, { only } = {}) {
  const seen = new Map();
  const visit = (from, name) => {
    const dir = resolvePackage(from, name);
    if (!dir || seen.has(dir)) return;
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const files = only?.[name];
    seen.set(
      dir,
      files
        ? files.reduce((n, f) => n + (existsSync(join(dir, f)) ? sizeOf(join(dir, f)) : 0), 0) +
            statSync(join(dir, 'package.json')).size
        : sizeOf(dir),
    );
    // npm installs a package's peers with it, except those it marks optional (openai's AWS SDK, ws).
    const peers = Object.keys(pkg.peerDependencies ?? {}).filter((name) => !pkg.peerDependenciesMeta?.[name]?.optional);
    for (const dep of [...Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }), ...peers]) visit(dir, dep);
  };
  for (const name of names) visit(fromDir, name);
  return { packages: seen.size, mb: [...seen.values()].reduce((a, b) => a + b, 0) / 1024 / 1024 };
}
