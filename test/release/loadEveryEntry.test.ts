// Every entry of every package, loaded as a user's project loads it — by name, from a folder outside
// the repository — with require() and with import() on each supported Node: the same exports both
// ways, and the very same module (the CommonJS entry is the ES module build, not a second copy).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { libraryPackages } from './libraryPackages.js';
import { inRange, nodeOf, SUPPORTED_NODES } from './runtimes.js';

// For each module name given: its export names by require() and by import(), and whether both
// gave the same objects. require() goes first, so no module of the graph was imported before.
const LOAD_BOTH_WAYS = `
const names = process.argv.slice(2);
const required = names.map((name) => require(name));
(async () => {
  const loaded = [];
  for (const [index, name] of names.entries()) {
    const imported = await import(name);
    const byRequire = required[index];
    const keys = Object.keys(imported).sort();
    loaded.push({
      name,
      required: Object.keys(byRequire).sort(),
      imported: keys,
      sameNamespace: byRequire === imported,
      sameValues: keys.every((key) => byRequire[key] === imported[key]),
    });
  }
  console.log(JSON.stringify(loaded));
})();
`;

// What loads more of the build when it is used through require(): zod loaded lazily by core's
// lazyModule (import.meta.resolve), a page read in tools' worker thread (a module found beside
// the caller by import.meta.url), and mcp's server reading its version from the package.json.
const USE_THROUGH_REQUIRE = `
const { terminate } = require('@openmanus/core');
const { readableMarkdown } = require('@openmanus/tools');
const { createMcpServer } = require('@openmanus/mcp');
(async () => {
  const valid = JSON.stringify(terminate.parse({ status: 'success' }));
  const invalid = JSON.stringify(terminate.parse({ status: 'maybe' }));
  const page = await readableMarkdown(
    '<html><head><title>Required</title></head><body><article><h1>Loaded by require</h1><p>' +
      'A page read in a worker thread, started from a module that a CommonJS project required. '.repeat(5) +
      '</p></article></body></html>',
    'https://example.com/',
  );
  const server = createMcpServer([terminate]);
  await server.close();
  console.log(JSON.stringify({ valid, invalid, markdown: page.markdown }));
})();
`;

const run = promisify(execFile);
let project: string;

beforeAll(async () => {
  // node_modules links to the packages' folders, as a linked install has them: resolved by name,
  // their own dependencies found from their real paths.
  project = await mkdtemp(join(tmpdir(), 'outside-project-'));
  await mkdir(join(project, 'node_modules', '@openmanus'), { recursive: true });
  for (const { dir } of libraryPackages) {
    await symlink(dir, join(project, 'node_modules', '@openmanus', basename(dir)));
  }
  await writeFile(join(project, 'package.json'), '{ "type": "commonjs" }\n');
  await writeFile(join(project, 'loadBothWays.cjs'), LOAD_BOTH_WAYS);
  await writeFile(join(project, 'useThroughRequire.cjs'), USE_THROUGH_REQUIRE);
});

afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

interface Loaded {
  readonly name: string;
  readonly required: readonly string[];
  readonly imported: readonly string[];
  readonly sameNamespace: boolean;
  readonly sameValues: boolean;
}

describe.each(SUPPORTED_NODES)('on Node $major', ({ major, minor }) => {
  // A package whose engines leave this Node out (sqlite's better-sqlite3 needs 22) is not loaded on it.
  const supported = libraryPackages.filter(({ nodeRange }) => inRange(nodeRange, major, minor));
  it.each(supported)('$name: every entry by require() is the module import() gives', async ({ entries }) => {
    const { stdout } = await run(nodeOf(major, minor), ['loadBothWays.cjs', ...entries], {
      cwd: project,
      timeout: 90_000,
    });
    const loaded = JSON.parse(stdout) as Loaded[];
    expect(loaded.map(({ name }) => name)).toEqual(entries);
    for (const { name, required, imported, sameNamespace, sameValues } of loaded) {
      expect(imported.length, `${name} exports something`).toBeGreaterThan(0);
      expect(required, name).toEqual(imported);
      expect(sameNamespace, `${name}: require() and import() give one namespace`).toBe(true);
      expect(sameValues, `${name}: the same objects`).toBe(true);
    }
  });

  it('runs lazily loaded code, a worker thread and a package.json read through require()', async () => {
    const { stdout } = await run(nodeOf(major, minor), ['useThroughRequire.cjs'], { cwd: project, timeout: 90_000 });
    const { valid, invalid, markdown } = JSON.parse(stdout) as { valid: string; invalid: string; markdown: string };
    expect(valid).toContain('"success"');
    expect(valid).not.toMatch(/invalid/i);
    expect(invalid).toMatch(/invalid option/i);
    expect(markdown).toContain('Loaded by require');
  });
});
