// The documentation site builds offline from a copy of docs/ (`astro build`, as `pnpm docs:build`
// runs it): every section, the TypeDoc reference of each package, the search index; and the build
// fails on a broken internal link or anchor.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const docs = join(root, 'docs');
const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A copy of the site's sources (TypeDoc's output and builds left out), with `pages` replacing its pages when given. */
async function siteCopy(pages?: Record<string, string>): Promise<string> {
  // Inside docs/, so that its packages resolve from docs/node_modules as they do for docs/ itself.
  const dir = await mkdtemp(join(docs, '.site-'));
  made.push(dir);
  const generated = /^\/(node_modules|dist|\.astro|\.site-[^/]*)(\/|$)|\/content\/docs\/reference\/[^/]+\//;
  for (const name of await readdir(docs)) {
    if (generated.test(`/${name}`)) continue;
    await cp(join(docs, name), join(dir, name), {
      recursive: true,
      filter: (source) => !generated.test(source.slice(docs.length)),
    });
  }
  if (pages) {
    const content = join(dir, 'src', 'content', 'docs');
    await rm(content, { recursive: true });
    for (const [name, text] of Object.entries(pages)) {
      await mkdir(join(content, name, '..'), { recursive: true });
      await writeFile(join(content, name), text);
    }
  }
  return dir;
}

function build(dir: string, env: Record<string, string> = {}) {
  const astro = join(docs, 'node_modules', 'astro', 'bin', 'astro.mjs');
  return promisify(execFile)(process.execPath, [astro, 'build'], {
    cwd: dir,
    env: { ...process.env, OPENMANUS_REPO_ROOT: root, ASTRO_TELEMETRY_DISABLED: '1', ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
}

const page = (title: string, body: string) => `---\ntitle: ${title}\n---\n\n${body}\n`;

describe('the documentation site', () => {
  it('builds every section and the API reference, with no broken link', { timeout: 900_000 }, async () => {
    const dir = await siteCopy();
    const { stdout, stderr } = await build(dir);
    expect(`${stdout}${stderr}`).toContain('All internal links are valid');
    const html = async (path: string) => readFile(join(dir, 'dist', path, 'index.html'), 'utf8');
    for (const section of ['getting-started', 'concepts', 'guides', 'cli', 'security', 'performance', 'migrating']) {
      expect(await html(section), section).toContain('<h1');
    }
    expect(await html('reference/error-codes')).toContain('CHECKPOINT_CONFLICT');
    for (const pkg of ['core', 'tools', 'browser', 'mcp', 'flow', 'sandbox', 'durable', 'sqlite', 'tracing']) {
      expect((await readdir(join(dir, 'dist', 'reference', pkg))).length, pkg).toBeGreaterThan(1);
    }
    expect(await html('reference/core/index/functions/run')).toContain('RunOutcome');
    expect((await readdir(join(dir, 'dist', 'pagefind'))).length).toBeGreaterThan(0); // offline search
  });

  it('fails to build on a broken link or anchor, naming them', { timeout: 300_000 }, async () => {
    const dir = await siteCopy({
      'index.md': page('Home', 'See [the guide](/guides/one/#a-section).'),
      'reference/error-codes.md': page('Error codes', 'None.'),
      'guides/one.md': page(
        'One',
        '## A section\n\nSee [a missing page](/guides/nowhere/) and [a missing anchor](/guides/one/#no-such-heading).',
      ),
    });
    const failure = await build(dir, { OPENMANUS_DOCS_REFERENCE: 'off' }).then(
      () => undefined,
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(failure, 'the build should fail').toBeDefined();
    const output = `${failure?.stdout}${failure?.stderr}`;
    expect(output).toContain('/guides/nowhere/');
    expect(output).toContain('/guides/one/#no-such-heading');
    expect(output).not.toContain('/guides/one/#a-section');
  });
});
