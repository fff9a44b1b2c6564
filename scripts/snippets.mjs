// The snippet check: every TypeScript block of the docs (README.md, packages/*/README.md,
// examples/*/README.md, the site's pages under docs/src/content/docs) type-checks as a user's file
// would — strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess — against the built packages.
// ```ts fragment marks a piece on purpose (not checked); ```ts file=path[#region] shows a file and
// must equal it; ```ts run marks a block that runs offline as written (test/docs/runnable.test.ts runs
// it, and compares what it prints with the ```text block after it, if there is one). Used by
// scripts/check-snippets.mjs and test/docs/snippets.test.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export const root = join(import.meta.dirname, '..');

/** Every markdown file the check covers, relative to the repository root. */
export function markdownFiles() {
  const files = ['README.md'];
  for (const parent of ['packages', 'examples']) {
    for (const name of readdirSync(join(root, parent))) {
      if (existsSync(join(root, parent, name, 'README.md'))) files.push(`${parent}/${name}/README.md`);
    }
  }
  const pages = join(root, 'docs', 'src', 'content', 'docs');
  for (const file of readdirSync(pages, { recursive: true })) {
    // reference/<package>/ is TypeDoc's output, generated at build time.
    if (/\.mdx?$/.test(file) && !/^reference\/[^/]+\//.test(file)) files.push(`docs/src/content/docs/${file}`);
  }
  return files.sort();
}

/** The ```ts blocks of a markdown text: their line, code, and whether they are fragments or show a file. */
export function blocksOf(text) {
  const blocks = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(ts|typescript|tsx)\b(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) body.push(lines[i].slice(open[1].length));
    const file = /\bfile=(\S+)/.exec(open[3])?.[1];
    const run = /\brun\b/.test(open[3]);
    // What a runnable block prints: the ```text block right after it (blank lines or one line ending in ':' between).
    let k = i + 1;
    while (k < lines.length && lines[k].trim() === '') k++;
    if (k < lines.length && /:\s*$/.test(lines[k]) && !lines[k].startsWith('```')) k++;
    while (k < lines.length && lines[k].trim() === '') k++;
    let prints;
    if (run && /^```text\s*$/.test(lines[k] ?? '')) {
      const text = [];
      for (k++; k < lines.length && !/^```\s*$/.test(lines[k]); k++) text.push(lines[k]);
      prints = text.join('\n');
    }
    blocks.push({ line: start + 1, code: body.join('\n'), fragment: /\bfragment\b/.test(open[3]), file, run, prints });
  }
  return blocks;
}

/** Where a file's imports resolve: a package's README from that package, the rest from docs/ (which depends on every package). */
function ownerOf(file) {
  const match = /^(packages|examples)\/([^/]+)\//.exec(file);
  return match ? join(root, match[1], match[2]) : join(root, 'docs');
}

/**
 * The text a ```ts file=… block must equal: the file (without its last newline), or for
 * `path#name` the lines between `// #region name` and `// #endregion name`, dedented. The file is
 * compiled and tested where it lives, so the page cannot drift from it.
 */
export function sourceOf(reference) {
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

/**
 * Checks the blocks of `documents` ({ name, text }: name relative to the repository root, which
 * decides where imports resolve). Resolves with the number of blocks checked and, per failing block
 * (`name:line`), its messages.
 */
export function checkSnippets(documents) {
  const snippets = new Map();
  const failures = new Map();
  let shown = 0;
  for (const { name, text } of documents) {
    const owner = ownerOf(name);
    for (const block of blocksOf(text)) {
      const key = `${name}:${block.line}`;
      if (block.file) {
        shown++;
        try {
          if (sourceOf(block.file) !== block.code) {
            failures.set(key, [`differs from ${block.file}: the block must be the file's text`]);
          }
        } catch (error) {
          failures.set(key, [error.message]);
        }
        continue;
      }
      if (block.fragment) continue;
      // An .mts file beside the owner's package.json: its imports resolve as that package's do.
      const path = join(owner, `__snippet_${name.replace(/\W/g, '_')}_${block.line}.mts`);
      snippets.set(path, { key, code: `${block.code}\nexport {};\n` });
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
    const key = snippets.get(path)?.key ?? (path ? relative(root, path) : 'options');
    const where =
      diagnostic.file && diagnostic.start !== undefined
        ? `+${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1}: `
        : '';
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    failures.set(key, [...(failures.get(key) ?? []), `${where}${message}`]);
  }
  return { checked: snippets.size + shown, failures };
}
