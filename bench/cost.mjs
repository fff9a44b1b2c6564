// Usage: `pnpm build && node bench/cost.mjs` — cost per task; COST_ONLY=ours,raw picks contenders, COST_TASKS=research a task.
// Every contender runs the same scripted tasks against a local OpenAI-compatible server, one process
// per run; the figures come from the request bodies the server received (see cost/prefix.mjs).

import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTranscript } from '@openmanus/core';
import { startOpenAiServer, transcriptScript } from '@openmanus/core/testing';
import { getEncoding } from 'js-tiktoken';
import { childJson } from './childJson.mjs';
import { measurePrefixes } from './cost/prefix.mjs';
import { researchReply, STEP_LIMIT, STEPS } from './cost/research.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const log = (line) => process.stderr.write(`${line}\n`);

/** Dollars per token, and the cached input's price as a share of the input's. */
export const PRICES = { input: 2.5 / 1e6, output: 10 / 1e6, cachedRates: [0.1, 0.5] };

export const costContenders = [
  { id: 'raw', label: 'raw openai loop (append-only)', package: 'openai' },
  { id: 'ours', label: '@openmanus/core', package: '@openmanus/core' },
  { id: 'agents', label: '@openai/agents', package: '@openai/agents', peer: true },
  { id: 'aisdk', label: 'ai (AI SDK)', package: 'ai', peer: true },
  { id: 'langgraph', label: '@langchain/langgraph', package: '@langchain/langgraph', peer: true },
  { id: 'mastra', label: '@mastra/core', package: '@mastra/core', peer: true },
];
const peersInstalled = () => existsSync(here('./peers/node_modules/.package-lock.json'));
const versionOf = (c) =>
  JSON.parse(readFileSync(here(`./${c.peer ? 'peers/' : ''}node_modules/${c.package}/package.json`), 'utf8')).version;

/**
 * The tasks: the scripted replies the server gives (a list, or a function of the reply's index),
 * what the contender's process is told, and why its run did not do the task (if it did not).
 */
const tasks = {
  research: {
    title: `Research loop: ${STEPS} steps of \`search\` / \`fetch_page\` (~300-token observations), then the answer`,
    async prepare() {
      const model = 'research-150';
      const { content } = researchReply(STEPS);
      return {
        script: (_request, index) => researchReply(index),
        options: { model },
        failure: (answer) => (answer === content ? undefined : `answered ${JSON.stringify(answer).slice(0, 80)}`),
        close: async () => {},
      };
    },
  },
  demo: {
    title:
      "`pnpm demo`'s browsing task: Manus researches the bundled Kyoto travel site in Chromium, its recorded model replies replayed",
    async prepare() {
      const { startTravelSite } = await import('../examples/cli/dist/travelSite.js');
      const transcript = await loadTranscript(here('../examples/cli/demo/travel-transcript.json'));
      const site = await startTravelSite();
      const workspace = await mkdtemp(join(tmpdir(), 'cost-demo-'));
      return {
        script: transcriptScript(transcript, { workspace, site: site.url }),
        options: { model: transcript.model, siteUrl: site.url, workspace },
        failure: () => (existsSync(join(workspace, 'handbook.html')) ? undefined : 'wrote no handbook.html'),
        close: async () => {
          await site.close();
          await rm(workspace, { recursive: true, force: true });
        },
      };
    },
  },
};
/** Who can run which task: the peers have no browser tool of ours, nor the raw loop. */
const runs = (contender, task) => task !== 'demo' || contender.id === 'ours';

function runIn(contender, task, options) {
  return childJson(
    [
      '--no-deprecation',
      '--import',
      here('./guard.mjs'),
      here('./cost/run.mjs'),
      contender,
      task,
      JSON.stringify(options),
    ],
    process.env.CHROME_PATH ? { CHROME_PATH: process.env.CHROME_PATH } : {},
  );
}

/** The output tokens of the replies the model gave: their text and their calls' names and arguments. */
const outputTokens = (replies, encode) =>
  replies.reduce(
    (sum, r) =>
      sum +
      encode(r.content ?? '').length +
      (r.toolCalls ?? []).reduce(
        (s, c) => s + encode(c.name).length + encode(JSON.stringify(c.arguments ?? {})).length,
        0,
      ),
    0,
  );

const costAt = (m, rate) =>
  (m.tokens - m.cacheable) * PRICES.input + m.cacheable * PRICES.input * rate + m.output * PRICES.output;

async function measure(contender, taskName, encode) {
  const task = tasks[taskName];
  const { script, options, failure, close } = await task.prepare();
  const served = [];
  const recording = (request, index) => {
    const reply = typeof script === 'function' ? script(request, index) : script[index];
    const resolved = typeof reply === 'function' ? reply(request, index) : reply;
    if (resolved) served.push(resolved);
    return resolved;
  };
  const server = await startOpenAiServer({ script: recording });
  try {
    const result = await runIn(contender.id, taskName, { ...options, baseURL: server.baseURL });
    const error = result.error ?? failure(result.answer);
    if (error) return { error };
    const expected = typeof script === 'function' ? STEPS + 1 : script.length;
    if (server.requests.length !== expected)
      return { error: `made ${server.requests.length} requests, the task takes ${expected}` };
    const m = measurePrefixes(server.requests, encode);
    const figures = { ...m, requestCount: server.requests.length, output: outputTokens(served, encode) };
    return { ...figures, costs: PRICES.cachedRates.map((rate) => costAt(figures, rate)) };
  } finally {
    await server.close();
    await close();
  }
}

const dollars = (x) => `$${x.toFixed(x < 1 ? 3 : 2)}`;
const count = (n) => n.toLocaleString('en-US');
const percent = (rate) => `${Math.round(rate * 100)} %`;

/** Our cost over the append-only loop's and over the cheapest peer's, at each cache price (below 1.00× = we pay less). */
function comparison(results, contenders, taskName) {
  const ours = results[`ours:${taskName}`];
  if (!ours?.costs) return [];
  const measured = (c) => results[`${c.id}:${taskName}`]?.costs;
  const peers = contenders.filter((c) => c.peer && measured(c));
  const against = PRICES.cachedRates.flatMap((rate, i) => {
    const parts = [];
    const raw = results[`raw:${taskName}`]?.costs;
    if (raw) parts.push(`${(ours.costs[i] / raw[i]).toFixed(2)}× the append-only loop's`);
    const cheapest = peers.reduce((best, c) => (!best || measured(c)[i] < measured(best)[i] ? c : best), undefined);
    if (cheapest)
      parts.push(`${(ours.costs[i] / measured(cheapest)[i]).toFixed(2)}× the cheapest peer's (${cheapest.label})`);
    return parts.length ? [`${parts.join(' and ')} with cached input at ${percent(rate)}`] : [];
  });
  return against.length ? [`Ours costs ${against.join('; ')}.`, ''] : [];
}

/** The paragraph and tables for the README (and the terminal). */
function report(results, contenders, taskNames) {
  const paragraph =
    `Cost per task (${new Date().toISOString().slice(0, 10)}). Every contender runs the same scripted model on a local ` +
    'OpenAI-compatible server that keeps each request body ' +
    "as it arrived; nothing is read from a framework itself. A request's input is its tools (the JSON of the array) and then each " +
    'message (JSON) in order, counted with o200k_base, each part tokenised on its own. **Cacheable**: the longest token prefix a request ' +
    "shares with any earlier request of the same run, what a provider's prefix cache could serve; the share is their sum over all input tokens. " +
    `**Cost** of one task at $${(PRICES.input * 1e6).toFixed(2)} per million input and $${(PRICES.output * 1e6).toFixed(2)} per million output tokens, cached input ` +
    `billed at ${PRICES.cachedRates.map(percent).join(' or ')} of the input price: uncached × input + cached × input × rate + output × output; ` +
    `output tokens are those of the scripted replies. Every contender keeps its defaults but for its step limit (${STEP_LIMIT}).`;
  const header = `| contender | requests | input tokens | cacheable | largest request | output tokens | ${PRICES.cachedRates.map((r) => `cost, cache at ${percent(r)}`).join(' | ')} |`;
  const rule = `|---|${'---:|'.repeat(5 + PRICES.cachedRates.length)}`;
  const notes = [];
  const sections = taskNames.flatMap((taskName) => {
    const rows = contenders.map((c) => {
      const label = `${c.label} ${versionOf(c)}`;
      const r = results[`${c.id}:${taskName}`];
      if (!r || r.error) {
        if (r?.error) notes.push(`- ${c.id} on the ${taskName} task failed: ${r.error}`);
        return `| ${label}${r ? '' : ' ¹'} | ${Array(5 + PRICES.cachedRates.length)
          .fill('—')
          .join(' | ')} |`;
      }
      return `| ${label} | ${r.requestCount} | ${count(r.tokens)} | ${percent(r.cacheable / r.tokens)} | ${count(r.largest)} | ${count(r.output)} | ${r.costs.map(dollars).join(' | ')} |`;
    });
    return [
      `**${tasks[taskName].title}**`,
      '',
      header,
      rule,
      ...rows,
      '',
      ...comparison(results, contenders, taskName),
    ];
  });
  const footnote = contenders.some((c) => taskNames.some((t) => !runs(c, t)))
    ? ['¹ Not run: the task needs our browser tool, which the peers and the raw loop do not have.']
    : [];
  return [paragraph, '', ...sections, ...footnote, ...(notes.length ? ['', ...notes] : [])].join('\n').trim();
}

/** Runs every chosen contender on every chosen task; returns the markdown and whether all runs succeeded. */
export async function costTable({
  only = process.env.COST_ONLY?.split(','),
  taskNames = process.env.COST_TASKS?.split(',') ?? Object.keys(tasks),
} = {}) {
  const chosen = costContenders.filter((c) => !only || only.includes(c.id));
  if (chosen.some((c) => c.peer) && !peersInstalled())
    log('cost: the peers are not installed (pnpm bench installs them)');
  const contenders = chosen.filter((c) => !c.peer || peersInstalled());
  const encoder = getEncoding('o200k_base');
  const encode = (text) => encoder.encode(text, 'all');
  const results = {};
  for (const taskName of taskNames)
    for (const c of contenders) {
      if (!runs(c, taskName)) continue;
      const started = Date.now();
      results[`${c.id}:${taskName}`] = await measure(c, taskName, encode);
      log(`cost: ${c.id} on ${taskName} (${Math.round((Date.now() - started) / 1000)} s)`);
    }
  const failed = Object.values(results).some((r) => r.error);
  return { markdown: report(results, contenders, taskNames), results, failed };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { markdown, failed } = await costTable();
  console.log(`\n${markdown}\n`);
  process.exit(failed ? 1 : 0);
}
