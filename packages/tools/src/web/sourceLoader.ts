// How a worker thread runs this package from its TypeScript sources, as the package's tests do:
// vitest compiles the sources for the test's own thread only, so a worker started from them
// loads them through these hooks, which strip the types with the TypeScript compiler (the
// repository's dev dependency). A built package runs its JavaScript and never uses them.

const dataUrl = (code: string) => `data:text/javascript,${encodeURIComponent(code)}`;

const hooks = `
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
let ts;
export async function resolve(specifier, context, next) {
  // The sources import each other as './name.js', the name they have once built.
  if (context.parentURL?.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const source = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
    if (existsSync(source)) return { url: source.href, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  ts ??= createRequire(url)('typescript');
  const { outputText } = ts.transpileModule(await readFile(new URL(url), 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}`;

/** For a worker's `execArgv` (`--import`): registers the hooks before the worker's module loads. */
export const SOURCE_LOADER = dataUrl(
  `import { register } from 'node:module'; register(${JSON.stringify(dataUrl(hooks))});`,
);
