// Codemod: tests import each name from the source module that defines it, not through an entry's
// index (`../src/index.js`, `../src/testing/index.js`, …), so that an entry's list can change without
// touching the tests, and a test loads only what it uses. Safe to re-run (after a merge that brought
// tests importing through an index): a file already importing from source modules is left as it is.
//
//   node scripts/codemods/test-imports-from-source.mjs [files or folders…]   (default: packages/*/test)
//
// Only static `import { … } from '<…>/src/<…>index.js'` declarations are rewritten; dynamic imports
// and `import * as` stay (they test an entry as a whole), as do the tests of the entry points
// themselves (ENTRY_TESTS). Run `npx biome check --write` on the changed files afterwards: it sorts
// the new imports.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Tests of the entry points themselves (their export lists, what loading one loads): they keep importing entries. */
const ENTRY_TESTS = /(^|\/)(readme[\w.]*|coldImport|purity|packageMetadata)\.test\.ts$/;
const INDEX_IMPORT = /(^|\/)src\/(.+\/)?index\.js$/;

const repoRoot = resolve(dirname(new URL(import.meta.url).pathname), '..', '..');

function filesIn(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|mts)$/.test(file) && !file.split(sep).some((part) => part === 'node_modules'))
    .map((file) => join(path, file));
}

const parse = (file) => ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
/** The `.ts` file a relative `.js` specifier in `from` names. */
const sourceOf = (from, specifier) => resolve(dirname(from), specifier).replace(/\.js$/, '.ts');

const definitions = new Map();
/**
 * Where each name an index exports is defined: name → { file, name there }, following
 * `export { a as b } from`, `export * from` and indexes re-exporting indexes.
 */
function definitionsOf(index) {
  if (definitions.has(index)) return definitions.get(index);
  const found = new Map();
  definitions.set(index, found);
  for (const statement of parse(index).statements) {
    if (!ts.isExportDeclaration(statement) || statement.moduleSpecifier === undefined) continue;
    const specifier = statement.moduleSpecifier.text;
    // A package's names re-exported (core's result.ts re-exports neverthrow): defined here, for our tests.
    if (!specifier.startsWith('.')) {
      if (statement.exportClause && ts.isNamedExports(statement.exportClause)) {
        for (const element of statement.exportClause.elements)
          found.set(element.name.text, { file: index, name: element.name.text });
      }
      continue;
    }
    const target = sourceOf(index, specifier);
    const { exportClause } = statement;
    if (exportClause === undefined) {
      // `export * from`: everything the target exports, found in it (or in what it re-exports).
      for (const [name, where] of exportsOf(target)) if (!found.has(name)) found.set(name, where);
    } else if (ts.isNamedExports(exportClause)) {
      for (const element of exportClause.elements) {
        const local = (element.propertyName ?? element.name).text;
        found.set(element.name.text, resolveIn(target, local));
      }
    }
  }
  return found;
}

/** What `file` exports: re-exports followed, names it declares itself as its own. */
function exportsOf(file) {
  const own = new Map();
  for (const statement of parse(file).statements) {
    const exported = ts.canHaveModifiers(statement)
      ? (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (!exported) continue;
    const names = ts.isVariableStatement(statement)
      ? statement.declarationList.declarations.map((d) => d.name.getText())
      : statement.name
        ? [statement.name.text]
        : [];
    for (const name of names) own.set(name, { file, name });
  }
  for (const [name, where] of definitionsOf(file)) if (!own.has(name)) own.set(name, where);
  return own;
}

/** Where `name`, as `file` exports it, is defined: in `file` itself, or further along its re-exports. */
const resolveIn = (file, name) => definitionsOf(file).get(name) ?? { file, name };

/**
 * Where `name`, imported through `index`, is defined: found through that index, or else through the
 * package's other entries (a test written before the name moved from the root entry to `/kernel`).
 */
function definitionOf(index, name) {
  const srcDir = index.slice(0, index.lastIndexOf(`${sep}src${sep}`) + `${sep}src`.length);
  const entries = [join(srcDir, 'index.ts'), ...readdirSync(srcDir).map((dir) => join(srcDir, dir, 'index.ts'))];
  for (const entry of [index, ...entries.filter((file) => file !== index && existsSync(file))]) {
    const where = definitionsOf(entry).get(name);
    if (where !== undefined) return where;
  }
  return undefined;
}

/** The import declarations of `file` rewritten, or undefined when it has none to rewrite. */
function rewrite(file) {
  const source = parse(file);
  const edits = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier.text;
    const bindings = statement.importClause?.namedBindings;
    if (!specifier.startsWith('.') || !INDEX_IMPORT.test(specifier)) continue;
    if (statement.importClause.name !== undefined || bindings === undefined || !ts.isNamedImports(bindings)) continue;
    const index = sourceOf(file, specifier);
    const typeOnly = statement.importClause.isTypeOnly;
    const byModule = new Map();
    for (const element of bindings.elements) {
      const imported = (element.propertyName ?? element.name).text;
      const where = definitionOf(index, imported);
      if (where === undefined) throw new Error(`${file}: no entry of ${specifier}'s package exports ${imported}`);
      const alias = where.name === element.name.text ? '' : ` as ${element.name.text}`;
      const entry = `${typeOnly || element.isTypeOnly ? 'type ' : ''}${where.name}${alias}`;
      byModule.set(where.file, [...(byModule.get(where.file) ?? []), entry]);
    }
    const lines = [...byModule].map(([module, names]) => {
      let path = relative(dirname(file), module).split(sep).join('/').replace(/\.ts$/, '.js');
      if (!path.startsWith('.')) path = `./${path}`;
      // All of one module's names types: `import type`, as the original said it.
      const allTypes = names.every((name) => name.startsWith('type '));
      const list = allTypes ? names.map((name) => name.slice('type '.length)) : names;
      return `import ${allTypes ? 'type ' : ''}{ ${list.join(', ')} } from '${path}';`;
    });
    edits.push({ start: statement.getStart(source), end: statement.getEnd(), text: lines.join('\n') });
  }
  if (edits.length === 0) return undefined;
  let text = source.text;
  for (const { start, end, text: replacement } of edits.reverse())
    text = text.slice(0, start) + replacement + text.slice(end);
  return text;
}

const targets = process.argv.slice(2);
const roots =
  targets.length > 0
    ? targets
    : readdirSync(join(repoRoot, 'packages')).map((p) => join(repoRoot, 'packages', p, 'test'));
const changed = [];
for (const file of roots.flatMap((root) => filesIn(resolve(root)))) {
  if (ENTRY_TESTS.test(file.split(sep).join('/'))) continue;
  const text = rewrite(file);
  if (text === undefined) continue;
  writeFileSync(file, text);
  changed.push(relative(process.cwd(), file));
}
if (changed.length > 0) console.log(changed.join('\n'));
