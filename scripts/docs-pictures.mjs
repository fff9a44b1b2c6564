// `pnpm docs:pictures`: the docs site's pictures, each made from the real thing, into
// docs/src/assets/pictures/ (the studio's into docs/src/assets/studio/). `node scripts/docs-pictures.mjs
// architecture` (or service, cli, bench, studio)
// makes one. Needs the packages built (pnpm docs:pictures builds them) and a Chromium (CHROME_PATH,
// else /usr/bin/chromium) for the screenshots.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { terminalHtml } from './docs-pictures/ansi.mjs';
import { architectureSvg } from './docs-pictures/architecture.mjs';
import { benchCharts, benchFigures } from './docs-pictures/bench.mjs';
import { launchChromium } from './docs-pictures/chromium.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const out = join(root, 'docs/src/assets/pictures');
const WAIT = 90_000; // a backstop for page state that never comes, not a delay
const written = [];
const cleanups = [];

async function save(name, content) {
  await mkdir(out, { recursive: true });
  const path = join(out, name);
  if (content !== undefined) await writeFile(path, content);
  written.push(relative(root, path));
}

/** The environment without a configured model, so the examples replay their recorded runs offline. */
function offlineEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENMANUS_MODEL', 'OPENMANUS_CONFIG', 'NO_COLOR'])
    delete env[name];
  return env;
}

async function tempDir(prefix) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

let browser;
async function chromium() {
  if (!browser) {
    browser = await launchChromium();
    cleanups.push(() => browser.close());
  }
  return browser;
}

async function architecture() {
  await save('architecture.svg', architectureSvg());
}

/** The bench's stored tables: the first of these files that holds both blocks. */
function benchSource() {
  const candidates = ['README.md', 'docs/src/content/docs/performance/index.md'];
  for (const name of candidates) {
    const path = join(root, name);
    if (!existsSync(path)) continue;
    const text = readFileSync(path, 'utf8');
    if (text.includes('<!-- bench:start -->') && text.includes('<!-- cost:start -->')) return { name, text };
  }
  throw new Error(
    `no file holds the bench's <!-- bench:start --> and <!-- cost:start --> blocks (looked in ${candidates.join(', ')})`,
  );
}

async function bench() {
  const { name, text } = benchSource();
  for (const [file, svg] of Object.entries(benchCharts(benchFigures(text), name))) await save(file, svg);
}

/** examples/http-service's program (`pnpm serve`), offline, in a temp dir; its studio with the demo run waiting for approval. */
async function service() {
  const dir = await tempDir('docs-pictures-service-');
  const child = spawn(process.execPath, [join(root, 'examples/http-service/dist/main.js')], {
    cwd: dir,
    env: offlineEnv({
      PORT: '0',
      OPENMANUS_SERVICE_DATA: join(dir, 'data'),
      OPENMANUS_SERVICE_WORKSPACE: join(dir, 'workspace'),
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit');
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  // It prints the demo's task and the studio's address with the token.
  const { url, task } = await new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const found = stdout.match(/Open (http:\/\/127\.0\.0\.1:\d+\/studio\/#token=\S+)/);
      const demo = stdout.match(/\(try: (.+)\)\n/);
      if (found && demo) resolve({ url: found[1], task: demo[1] });
    });
    child.on('exit', (code) => reject(new Error(`the service exited (${code}): ${stderr}`)));
  });
  const context = await (await chromium()).newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('html[data-ready="yes"]').waitFor({ timeout: WAIT });
  await page.locator('#new-task').fill(task);
  await page.locator('#start').click();
  // The run, listed and open, waits for its Python call to be approved.
  await page.locator('#timeline button.approve').waitFor({ timeout: WAIT });
  await page.locator('#runs li', { hasText: 'awaiting_approval' }).waitFor({ timeout: WAIT });
  const path = join(out, 'service-page.png');
  await mkdir(out, { recursive: true });
  // The whole page: the call waiting for approval is below the first screen.
  await page.screenshot({ path, fullPage: true });
  await save('service-page.png');
  await context.close();
}

/** `pnpm demo` for real, offline (its recorded model replies replayed), in a pseudo-terminal for its colours. */
async function cli() {
  const dir = await tempDir('openmanus-');
  const demo = join(root, 'examples/cli/dist/demo.js');
  const env = offlineEnv({ TERM: 'xterm-256color' });
  // util-linux's `script` gives the demo a terminal, as a person's shell would; without it, no colours.
  const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
  const [command, args] = hasScript
    ? ['script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(demo)}`, '/dev/null']]
    : [process.execPath, [demo]];
  const child = spawn(command, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`pnpm demo exited with ${code}:\n${output}`);
  const page = await (await chromium()).newPage({ viewport: { width: 1400, height: 900 } });
  await page.setContent(
    terminalHtml({ title: 'pnpm demo — offline: recorded model replies, real tools', command: 'pnpm demo', output }),
  );
  const path = join(out, 'cli-terminal.png');
  await mkdir(out, { recursive: true });
  await page.locator('#terminal').screenshot({ path });
  await save('cli-terminal.png');
  await page.close();
}

/** The studio's screenshots, made by its Chromium tests (packages/server/test/studio.test.ts) into docs/src/assets/studio/. */
async function studio() {
  const dir = join(root, 'docs/src/assets/studio');
  const vitest = spawnSync('npx', ['vitest', 'run', 'packages/server/test/studio.test.ts'], {
    cwd: root,
    env: { ...process.env, OPENMANUS_STUDIO_SHOTS: dir },
    encoding: 'utf8',
  });
  if (vitest.status !== 0) throw new Error(`the studio's tests failed:\n${vitest.stdout}${vitest.stderr}`);
  for (const name of ['timeline.png', 'fork.png', 'narrow.png']) written.push(relative(root, join(dir, name)));
}

const pictures = { architecture, bench, service, cli, studio };
const chosen = process.argv.slice(2);
const unknown = chosen.filter((name) => !(name in pictures));
if (unknown.length > 0) {
  console.error(
    `docs-pictures: unknown picture ${unknown.join(', ')}; choose from ${Object.keys(pictures).join(', ')}`,
  );
  process.exit(2);
}
let failed = false;
try {
  for (const name of chosen.length > 0 ? chosen : Object.keys(pictures)) {
    try {
      await pictures[name]();
    } catch (error) {
      failed = true;
      console.error(`docs-pictures: ${name} failed: ${error instanceof Error ? error.message : error}`);
    }
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
}
for (const path of written) console.log(`wrote ${path}`);
process.exit(failed ? 1 : 0);
