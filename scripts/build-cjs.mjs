// The CommonJS face of a package, made after its ES module build (run from the package's folder by
// its `build` script). Each `require` entry in package.json's `exports` becomes a one-line module
// under dist/cjs/ (a folder of `"type": "commonjs"`) that require()s the ES module entry beside it:
// Node 20.19+, 22.12+ and 24 load an ES module graph with require(), so a CommonJS project gets the
// same module instances as an ES module one, never a second copy (no dual-package hazard). The
// declarations are copied under dist/cjs/ too, where TypeScript reads them as CommonJS ones, as the
// `require` entries are.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';

const CJS_DIR = 'dist/cjs';

/** The entries of `exports`, each with its ES module and CommonJS files, checked to be in our layout. */
function entriesOf(manifest) {
  const fail = (subpath, why) => {
    throw new Error(`${manifest.name}: exports["${subpath}"] ${why}`);
  };
  return Object.entries(manifest.exports ?? {}).map(([subpath, conditions]) => {
    const { import: esm, require: cjs } = conditions ?? {};
    if (!esm?.types || !esm.default) fail(subpath, 'needs "import": { "types", "default" }');
    if (!cjs?.types || !cjs.default) fail(subpath, 'needs "require": { "types", "default" }');
    if (!esm.default.startsWith('./dist/') || !esm.default.endsWith('.js'))
      fail(subpath, 'imports a file outside dist/');
    const inCjs = (file) => `./${CJS_DIR}/${file.slice('./dist/'.length)}`;
    if (cjs.default !== inCjs(esm.default)) fail(subpath, `requires "${cjs.default}", not "${inCjs(esm.default)}"`);
    if (cjs.types !== inCjs(esm.types)) fail(subpath, `has require types "${cjs.types}", not "${inCjs(esm.types)}"`);
    return { esm: esm.default, cjs: cjs.default };
  });
}

/** A declaration map moved one folder down: its sources are found from the new place. */
function movedMap(text, from, to) {
  const map = JSON.parse(text);
  map.sources = map.sources.map((source) => relative(dirname(to), resolve(dirname(from), source)));
  return JSON.stringify(map);
}

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const entries = entriesOf(manifest);
rmSync(CJS_DIR, { recursive: true, force: true });

for (const file of readdirSync('dist', { recursive: true, encoding: 'utf8' })) {
  const from = join('dist', file);
  const to = join(CJS_DIR, file);
  if (!file.endsWith('.d.ts') && !file.endsWith('.d.ts.map')) continue;
  mkdirSync(dirname(to), { recursive: true });
  if (file.endsWith('.d.ts')) cpSync(from, to);
  else writeFileSync(to, movedMap(readFileSync(from, 'utf8'), from, to));
}
writeFileSync(join(CJS_DIR, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);

for (const { esm, cjs } of entries) {
  mkdirSync(dirname(cjs), { recursive: true });
  writeFileSync(cjs, `'use strict';\nmodule.exports = require('${posix.relative(posix.dirname(cjs), esm)}');\n`);
}
