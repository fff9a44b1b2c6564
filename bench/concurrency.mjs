// Many runs in one process: N runs started at once against the bench's model server (its own
// process). Reports the event loop's worst delay, the memory per run at the peak, and the memory
// left once they have all finished.
//   node --expose-gc concurrency.mjs [runs]           N runs of one adder agent (3 model calls each)
//   node --expose-gc concurrency.mjs [runs] --mixed   N runs of different agents at once: a few dozen
//     Manus runs with python_execute (a workspace each) and browser-agent runs (one Chromium, a
//     context each, pages served here on 127.0.0.1), the rest MCP-agent runs sharing one stdio MCP
//     client and adder runs; every answer is checked to carry its own run's token and no other.
// Memory is this process's (Chromium and the Python processes are processes of their own).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createAgent, createManus, createOpenAiLlm, defaultPolicies, defineTool, run } from '@openmanus/core';

const args = process.argv.slice(2);
const mixed = args.includes('--mixed');
const runs = Number(args.find((arg) => !arg.startsWith('--')) ?? 1000);
const steps = 3;
const server = spawn(process.execPath, [fileURLToPath(new URL('./server.js', import.meta.url))], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const [line] = await once(server.stdout, 'data');
const { baseURL } = JSON.parse(String(line));

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  parallelSafe: true,
  execute: ({ a, b }) => String(a + b),
});
const agent = createAgent({
  name: 'adder',
  systemPrompt: 'You add numbers.',
  tools: [add],
  policies: defaultPolicies({ maxSteps: 50 }),
});
const llm = createOpenAiLlm({ model: `steps-${steps}`, apiKey: 'bench', baseURL, maxRetries: 0, timeoutMs: 600_000 });
const adderRun = (i) => run(agent, `task ${i}`, { llm });

/** The mixed runs: each a function of its number giving its outcome and whether its answer was its own. */
async function mixedRuns() {
  const { createBrowserAgent } = await import('@openmanus/browser');
  const { createMcpAgent, createMcpClient } = await import('@openmanus/mcp');
  // The MCP server of the CLI's many-runs test: `echo_later(text, ms)`.
  const memoServer = fileURLToPath(new URL('../examples/cli/test/fixtures/memoServer.mjs', import.meta.url));
  const digest = (token) => createHash('sha256').update(token).digest('hex').slice(0, 12);
  const pages = createServer((req, res) => {
    const token = /^\/page\/([\w-]+)$/.exec(req.url ?? '')?.[1] ?? 'none';
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<title>${token} ${digest(token)}</title><h1>${token}</h1>`);
  });
  pages.listen(0, '127.0.0.1');
  await once(pages, 'listening');
  const host = `127.0.0.1:${pages.address().port}`;
  const root = await mkdtemp(join(tmpdir(), 'openmanus-bench-many-'));
  const once_ = createOpenAiLlm({ model: 'call-once', apiKey: 'bench', baseURL, maxRetries: 0, timeoutMs: 600_000 });
  const browser = createBrowserAgent({ allowHosts: [host] });
  const mcp = createMcpClient({ servers: { memo: { command: process.execPath, args: [memoServer] } } });
  const mcpAgent = createMcpAgent({ client: mcp });
  const TOKEN = /\b(?:python|browser|mcp)-\d+\b/g;
  /** The outcome, its status `cross-talk` unless its answer shows `expected` and names no other run. */
  const checked = async (token, running, expected) => {
    const outcome = await running;
    const own = outcome.answer.includes(expected) && (outcome.answer.match(TOKEN) ?? []).every((t) => t === token);
    return own ? outcome : { ...outcome, status: 'cross-talk' };
  };
  const task = (token, call) => `Run ${token}: ${JSON.stringify(call)}`;
  const kinds = {
    async python(token) {
      const workspace = join(root, token);
      await mkdir(workspace);
      const code = `import hashlib, pathlib\nt = "${token}"\nd = hashlib.sha256(t.encode()).hexdigest()[:12]\npathlib.Path(t + ".txt").write_text(d)\nprint(t, d)`;
      const call = { name: 'python_execute', arguments: { code } };
      const result = await checked(
        token,
        run(createManus({ workspace }), task(token, call), { llm: once_ }),
        `${token} ${digest(token)}`,
      );
      const written = await readFile(join(workspace, `${token}.txt`), 'utf8').catch(() => '');
      return written === digest(token) ? result : { ...result, status: 'cross-talk' };
    },
    browser: (token) =>
      checked(
        token,
        run(
          browser,
          task(token, { name: 'browser_use', arguments: { action: 'go_to_url', url: `http://${host}/page/${token}` } }),
          { llm: once_, workspace: root },
        ),
        `Title: ${token} ${digest(token)}`,
      ),
    mcp: (token) =>
      checked(
        token,
        run(
          mcpAgent,
          task(token, { name: 'mcp_memo_echo_later', arguments: { text: token, ms: Math.floor(Math.random() * 20) } }),
          { llm: once_ },
        ),
        `echo ${token}`,
      ),
  };
  // Python and Chromium are heavy: a few dozen of those, the rest cheap agents.
  const heavy = Math.min(20, Math.floor(runs / 10));
  const kindOf = (i) => (i < heavy ? 'python' : i < heavy + heavy / 2 ? 'browser' : i % 2 ? 'mcp' : 'adder');
  const counts = {};
  for (let i = 0; i < runs; i++) counts[kindOf(i)] = (counts[kindOf(i)] ?? 0) + 1;
  return {
    /** Run `i` of the mix, its token numbered `n` (the warm-up's differ from the measured runs'). */
    start: (i, n = i) => (kindOf(i) === 'adder' ? adderRun(n) : kinds[kindOf(i)](`${kindOf(i)}-${n}`)),
    counts,
    close: async () => {
      await mcp.close();
      pages.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

const settle = async () => {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
const mix = mixed ? await mixedRuns() : undefined;
// Warm up (JIT, inline caches, the connection pool; with --mixed every kind once, the MCP server
// connected) with a burst of its own, then measure from a settled baseline.
await Promise.all(Array.from({ length: 200 }, (_, i) => (mix && i < 40 ? mix.start(i * 25, runs + i) : adderRun(i))));
await settle();
const baseline = process.memoryUsage().rss;
const baseHeap = process.memoryUsage().heapUsed;
let peak = baseline;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 5);
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
const started = performance.now();
let outcomes = await Promise.all(Array.from({ length: runs }, (_, i) => (mix ? mix.start(i) : adderRun(i))));
const seconds = (performance.now() - started) / 1000;
delay.disable();
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
const failed = outcomes.filter((o) => o.status !== 'finished').length;
const crossTalk = outcomes.filter((o) => o.status === 'cross-talk').length;
// Let the outcomes go: what is left after this is what the library (or a leak) keeps.
outcomes = undefined;
await settle();
const after = process.memoryUsage().rss;
const afterHeap = process.memoryUsage().heapUsed;
await mix?.close();
const mb = (bytes) => Math.round((bytes / 1e6) * 10) / 10;
console.log(
  JSON.stringify({
    runs,
    ...(mix ? { kinds: mix.counts, crossTalk } : {}),
    failed,
    seconds: Math.round(seconds * 100) / 100,
    peakMb: mb(peak - baseline),
    kbPerRun: Math.round((peak - baseline) / runs / 1000),
    worstDelayMs: Math.round(delay.max / 1e6),
    p99DelayMs: Math.round(delay.percentile(99) / 1e6),
    leftMb: mb(after - baseline),
    heapLeftMb: mb(afterHeap - baseHeap),
  }),
);
server.kill();
process.exit(0);
