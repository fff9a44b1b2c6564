// Type-checks every TypeScript block of the docs (README.md, packages/*/README.md,
// examples/*/README.md, the pages under docs/src/content/docs) as a user's file would be: strict,
// exactOptionalPropertyTypes and noUncheckedIndexedAccess, against the built packages (run
// `pnpm build` first). A block whose info string says `fragment` (```ts fragment) is a piece on
// purpose and is not checked. Prints each failing block and its errors; exits 1 if any fails.
// Usage: node scripts/check-snippets.mjs [file.md …]
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..');

function markdownFiles() {
  const files = ['README.md'];
  for (const parent of ['packages', 'examples']) {
    for (const name of readdirSync(join(root, parent))) {
      if (existsSync(join(root, parent, name, 'README.md'))) files.push(`${parent}/${name}/README.md`);
    }
  }
  const pages = join(root, 'docs', 'src', 'content', 'docs');
  if (existsSync(pages)) {
    for (const file of readdirSync(pages, { recursive: true })) {
      // reference/<package>/ is TypeDoc's output, generated at build time.
      if (/\.mdx?$/.test(file) && !/^reference\/[^/]+\//.test(file)) files.push(`docs/src/content/docs/${file}`);
    }
  }
  return files;
}

/** The ```ts blocks of a markdown file: their line, code, and whether they are fragments. */
function blocksOf(text) {
  const blocks = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(ts|typescript|tsx)\b(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) body.push(lines[i].slice(open[1].length));
    const file = /\bfile=(\S+)/.exec(open[3])?.[1];
    blocks.push({ line: start + 1, code: body.join('\n'), fragment: /\bfragment\b/.test(open[3]), file });
  }
  return blocks;
}

/** Where a file's imports resolve: a package's README from that package, the rest from docs/ (which depends on every package). */
function ownerOf(file) {
  const match = /^(packages|examples)\/([^/]+)\//.exec(file);
  return match ? join(root, match[1], match[2]) : join(root, 'docs');
}

/**
 * A block shown from a file (```ts file=examples/embedding/src/hono.ts, or …/hono.ts#routes for the
 * lines between `// #region routes` and `// #endregion routes`) must equal it: the file is compiled
 * and tested where it lives, so the page cannot drift from it.
 */
function sourceOf(reference) {
  const [path, region] = reference.split('#');
  const text = readFileSync(join(root, path), 'utf8').replace(/\n$/, '');
  if (!region) return text;
  const lines = text.split('\n');
  const from = lines.findIndex((line) => line.trim() === `// #region ${region}`);
  const to = lines.findIndex((line) => line.trim() === `// #endregion ${region}`);
  if (from < 0 || to < from) throw new Error(`${path} has no region ${region}`);
  const body = lines.slice(from + 1, to);
  const indent = Math.min(...body.filter((line) => line.trim()).map((line) => /^ */.exec(line)[0].length));
  return body.map((line) => line.slice(indent)).join('\n');
}

const options = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2023,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: ['node'],
  typeRoots: [join(root, 'node_modules', '@types')],
};

const wanted = process.argv.slice(2);
const snippets = new Map();
const failures = new Map();
let shown = 0; // blocks shown from a file
for (const file of wanted.length > 0 ? wanted : markdownFiles()) {
  const owner = ownerOf(file);
  for (const block of blocksOf(readFileSync(join(root, file), 'utf8'))) {
    if (block.file) {
      shown++;
      let source;
      try {
        source = sourceOf(block.file);
      } catch (error) {
        source = undefined;
        failures.set(`${file}:${block.line}`, [String(error.message)]);
      }
      if (source !== undefined && source !== block.code) {
        failures.set(`${file}:${block.line}`, [`differs from ${block.file}: copy the file's text into the block`]);
      }
      continue;
    }
    if (block.fragment) continue;
    // An .mts file beside the owner's package.json: its imports resolve as that package's do.
    const path = join(owner, `__snippet_${file.replace(/\W/g, '_')}_${block.line}.mts`);
    snippets.set(path, { file, line: block.line, code: `${block.code}\nexport {};\n` });
  }
}

const host = ts.createCompilerHost(options);
const { fileExists, readFile, getSourceFile } = host;
host.fileExists = (path) => snippets.has(path) || fileExists.call(host, path);
host.readFile = (path) => snippets.get(path)?.code ?? readFile.call(host, path);
host.getSourceFile = (path, language, ...rest) =>
  snippets.has(path)
    ? ts.createSourceFile(path, snippets.get(path).code, language)
    : getSourceFile.call(host, path, language, ...rest);

const program = ts.createProgram([...snippets.keys()], options, host);
for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
  const path = diagnostic.file?.fileName;
  const snippet = path && snippets.get(path);
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  const key = snippet ? `${snippet.file}:${snippet.line}` : path ? relative(root, path) : 'options';
  const where =
    diagnostic.file && diagnostic.start !== undefined
      ? `+${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1}: `
      : '';
  failures.set(key, [...(failures.get(key) ?? []), `${where}${message}`]);
}
for (const [key, messages] of failures) console.log(`${key}\n  ${messages.join('\n  ')}`);
console.log(`${snippets.size + shown} blocks checked, ${failures.size} failing`);
process.exitCode = failures.size > 0 ? 1 : 0;
