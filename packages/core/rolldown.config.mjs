// The published build: each entry point bundled with the modules it needs, instead of one file per
// source module. Node's ES module loader costs memory per module it loads (~1 MB for ours), and
// a library imported by every run should not pay it. Declarations still come from tsc.
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';

const { dependencies, peerDependencies = {} } = JSON.parse(
  readFileSync(new URL('./package.json', import.meta.url), 'utf8'),
);
// An optional peer (a provider's SDK) is the user's to install: imported, never bundled.
const packages = [...Object.keys(dependencies), ...Object.keys(peerDependencies)];
const isExternal = (id) =>
  id.startsWith('node:') ||
  builtinModules.includes(id) ||
  packages.some((name) => id === name || id.startsWith(`${name}/`));

const reached = new Map();
/** The modules importing `entry` loads: everything it reaches by static imports (not `import()`). */
function loadedWith(entry, ctx) {
  const id = fileURLToPath(new URL(entry, import.meta.url));
  if (reached.has(id)) return reached.get(id);
  const modules = new Set();
  const visit = (module) => {
    if (modules.has(module)) return;
    modules.add(module);
    for (const next of ctx.getModuleInfo(module)?.importedIds ?? []) visit(next);
  };
  visit(id);
  reached.set(id, modules);
  return modules;
}

export default {
  input: {
    index: 'src/index.ts',
    'kernel/index': 'src/kernel/index.ts',
    'testing/index': 'src/testing/index.ts',
    'internal/index': 'src/internal/index.ts',
  },
  platform: 'node',
  external: isExternal,
  // Sources import each other as `./x.js`, as NodeNext wants.
  resolve: { extensionAlias: { '.js': ['.ts', '.js'] } },
  output: {
    dir: 'dist',
    format: 'esm',
    sourcemap: true,
    chunkFileNames: 'chunks/[name]-[hash].js',
    codeSplitting: {
      groups: [
        // The pure kernel alone, for `@openmanus/core/kernel`.
        {
          debugName: 'kernel',
          name: (id, ctx) => (loadedWith('./src/kernel/index.ts', ctx).has(id) ? 'kernel' : null),
          priority: 2,
        },
        // What importing the package loads anyway goes in one chunk; code reached only through
        // `import()` (a tool's implementation, the file store) stays in chunks loaded on first use.
        {
          debugName: 'core',
          name: (id, ctx) => (loadedWith('./src/index.ts', ctx).has(id) ? 'core' : null),
          priority: 1,
        },
      ],
    },
  },
};
