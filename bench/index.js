// pnpm bench: the same agent task in the raw openai SDK loop, @openmanus/core and the peer
// frameworks, each in a process of its own, interleaved over repetitions; medians and ratios.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { browserStateTable, browserStateTokens } from './browser-state.mjs';
import { childJson } from './childJson.mjs';
import { costTable } from './cost.mjs';
import { durableCost } from './durable.mjs';
import { footprint } from './footprint.mjs';
import {
  checkpointedRuns,
  editorOpsPerSecond,
  ownWorkPerStep,
  reducerThroughput,
  tokenCounting,
} from './inprocess.mjs';
import { pythonCost } from './python-cost.mjs';
import { sandboxCost } from './sandbox-cost.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const REPS = Number(process.env.BENCH_REPS ?? 5);
const RSS_SAMPLES = Math.max(REPS, Number(process.env.BENCH_RSS_SAMPLES ?? 11));
const ONLY = process.env.BENCH_ONLY?.split(',');
// e.g. BENCH_SCENARIOS=stream50,stream400 for a quick look at some figures (the README is then left alone).
const SCENARIOS = process.env.BENCH_SCENARIOS?.split(',');
const log = (line) => process.stderr.write(`${line}\n`);

// Each contender: where its packages are installed, and the packages a user adds for it
// (the first one names its version; all of them count for the install footprint).
const contenders = [
  { id: 'raw', label: 'raw openai loop', packages: ['openai'] },
  // The same loop checking the tool's arguments with zod: the cost of zod itself, beside ours with a zod tool.
  { id: 'rawZod', label: 'raw openai loop + zod', packages: ['openai', 'zod'] },
  { id: 'ours', label: '@openmanus/core', packages: ['@openmanus/core'] },
  // The same agent with its tool described by a plain JSON Schema, as the raw loop does: no zod loaded.
  { id: 'oursJson', label: '@openmanus/core, JSON Schema tool', packages: ['@openmanus/core'] },
  // The same agent with its model reached through the AI SDK port (fromAiSdk) on an
  // @ai-sdk/openai-compatible model: what that port costs per step beside our OpenAI port.
  {
    id: 'oursAiSdk',
    label: '@openmanus/core via AI SDK port',
    port: '@ai-sdk/openai-compatible',
    packages: ['@openmanus/core', '@ai-sdk/openai-compatible'],
  },
  { id: 'agents', label: '@openai/agents', peer: true, packages: ['@openai/agents'] },
  { id: 'aisdk', label: 'ai (AI SDK)', peer: true, packages: ['ai', '@ai-sdk/openai'] },
  {
    id: 'langgraph',
    label: '@langchain/langgraph',
    peer: true,
    packages: ['@langchain/langgraph', '@langchain/openai', '@langchain/core'],
  },
  { id: 'mastra', label: '@mastra/core', peer: true, packages: ['@mastra/core'] },
].filter((c) => !ONLY || ONLY.includes(c.id));
const installedIn = (c) => (c.peer ? here('./peers') : here('.'));
const version = (c, name = c.packages[0]) =>
  JSON.parse(readFileSync(`${installedIn(c)}/node_modules/${name}/package.json`, 'utf8')).version;
/** The column's heading: the label and its version, and the provider package of a contender on another port. */
const heading = (c) =>
  c.port ? `${c.label} (${version(c)}, ${c.port} ${version(c, c.port)})` : `${c.label} ${version(c)}`;

// Peers are pinned in bench/peers and installed on first use, outside the workspace and CI.
if (!existsSync(here('./peers/node_modules/.package-lock.json'))) {
  log('Installing the peer frameworks into bench/peers (first use, about a minute)…');
  try {
    execFileSync('npm', ['ci', '--engine-strict', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: here('./peers'),
      stdio: 'inherit',
    });
  } catch (error) {
    log(`Could not install the peers (${error.message}); measuring ours and the raw loop only.`);
    for (let i = contenders.length - 1; i >= 0; i--) if (contenders[i].peer) contenders.splice(i, 1);
  }
}

const server = spawn(process.execPath, [here('./server.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
const [line] = await once(server.stdout, 'data');
const endpoint = String(line).trim();

/** concurrency.mjs in a process of its own (it starts its own model server): its JSON line. */
async function manyRuns(runs, ...flags) {
  const args = [
    '--expose-gc',
    '--no-deprecation',
    '--import',
    here('./guard.mjs'),
    here('./concurrency.mjs'),
    String(runs),
    ...flags,
  ];
  const out = execFileSync(process.execPath, args, { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1));
}

function measure(contender, scenario) {
  return childJson([
    '--expose-gc',
    '--no-deprecation',
    '--import',
    here('./guard.mjs'),
    here('./one.mjs'),
    contender,
    scenario,
    endpoint,
  ]);
}

const scenarios = ['loop50', 'loop400', 'stream50', 'stream400', 'parallel', 'import'].filter(
  (s) => !SCENARIOS || SCENARIOS.includes(s),
);
const samples = {};
const errors = {};
const started = Date.now();
for (let rep = 0; rep < REPS; rep++) {
  for (const scenario of scenarios) {
    // Rotate who goes first so that drift on the machine hits every contender alike.
    const order = contenders.map((_, i) => contenders[(i + rep) % contenders.length]);
    for (const contender of order) {
      const result = await measure(contender.id, scenario);
      if (result.error) errors[`${contender.id}:${scenario}`] = result.error;
      else {
        const key = `${contender.id}:${scenario}`;
        samples[key] = [...(samples[key] ?? []), { ...result, rep }];
      }
    }
  }
  log(`repetition ${rep + 1}/${REPS} done (${Math.round((Date.now() - started) / 1000)}s)`);
}
// Peak RSS moves by ±5 MB between identical processes here (the allocator, GC timing): its figure
// is the median of more 400-step processes than the timings need, interleaved the same way.
if (scenarios.includes('loop400')) {
  for (let rep = REPS; rep < RSS_SAMPLES; rep++) {
    const order = contenders.map((_, i) => contenders[(i + rep) % contenders.length]);
    for (const contender of order) {
      const result = await measure(contender.id, 'loop400');
      if (result.error) log(`${contender.id} (peak RSS round ${rep + 1}): ${result.error}`);
      else samples[`${contender.id}:rss400`] = [...(samples[`${contender.id}:rss400`] ?? []), { ...result, rep }];
    }
  }
  log(`${RSS_SAMPLES} processes per contender for peak RSS (${Math.round((Date.now() - started) / 1000)}s)`);
}
server.kill('SIGTERM');

const median = (xs) => {
  if (!xs?.length) return undefined;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const fig = (id, scenario, key) => median(samples[`${id}:${scenario}`]?.map((s) => s[key]));
/** Peak RSS over every 400-step process of the contender (the timed ones and the extra ones). */
const peakRss = (id) =>
  median([...(samples[`${id}:loop400`] ?? []), ...(samples[`${id}:rss400`] ?? [])].map((s) => s.rssMB));

const sizes = Object.fromEntries(
  contenders.map((c) => [c.id, footprint(installedIn(c), c.packages, { only: { '@openmanus/core': ['dist'] } })]),
);

/**
 * Our figure over another's, repetition by repetition (each repetition runs every contender back
 * to back, so drift on the machine between repetitions cancels), then the median of those ratios.
 */
const pairedRatio = (scenarios, key) => (id) => {
  const byRep = (who) =>
    new Map(
      scenarios.flatMap((scenario) =>
        (samples[`${who}:${scenario}`] ?? []).map((s) => [`${scenario}:${s.rep}`, s[key]]),
      ),
    );
  const ours = byRep('ours');
  const theirs = byRep(id);
  return median([...ours].flatMap(([at, value]) => (theirs.get(at) ? [value / theirs.get(at)] : [])));
};

const rows = [
  ['ms per step, 50-step loop', (id) => fig(id, 'loop50', 'msPerStep'), 2, '', pairedRatio(['loop50'], 'msPerStep')],
  ['ms per step, 400-step loop', (id) => fig(id, 'loop400', 'msPerStep'), 2, '', pairedRatio(['loop400'], 'msPerStep')],
  [
    'growth 50 → 400 steps',
    (id) => {
      const a = fig(id, 'loop50', 'msPerStep');
      const b = fig(id, 'loop400', 'msPerStep');
      return a && b ? b / a : undefined;
    },
    2,
    '×',
  ],
  // Each in its streaming mode, every text and argument piece handed to a consumer as it arrives.
  [
    'ms per step, 50-step loop, streamed',
    (id) => fig(id, 'stream50', 'msPerStep'),
    2,
    '',
    pairedRatio(['stream50'], 'msPerStep'),
  ],
  [
    'ms per step, 400-step loop, streamed',
    (id) => fig(id, 'stream400', 'msPerStep'),
    2,
    '',
    pairedRatio(['stream400'], 'msPerStep'),
  ],
  [
    'ms per turn, 5 calls × 50 ms tool',
    (id) => fig(id, 'parallel', 'msPerStep'),
    1,
    '',
    pairedRatio(['parallel'], 'msPerStep'),
  ],
  ['peak RSS, 400-step run (MB)', peakRss, 0, '', pairedRatio(['loop400', 'rss400'], 'rssMB')],
  [
    'heap retained after 400-step run (MB)',
    (id) => fig(id, 'loop400', 'heapMB'),
    1,
    '',
    pairedRatio(['loop400'], 'heapMB'),
  ],
  ['cold import (ms)', (id) => fig(id, 'import', 'importMs'), 0, '', pairedRatio(['import'], 'importMs')],
  [
    'peak RSS after import (MB)',
    (id) => fig(id, 'import', 'importRssMB'),
    1,
    '',
    pairedRatio(['import'], 'importRssMB'),
  ],
  ['install: packages', (id) => sizes[id]?.packages, 0],
  ['install: MB on disk', (id) => sizes[id]?.mb, 1],
];
const format = (value, digits, suffix = '') => (value === undefined ? '–' : `${value.toFixed(digits)}${suffix}`);

const header = `| figure | ${contenders.map(heading).join(' | ')} |`;
const rule = `|---|${contenders.map(() => '---:').join('|')}|`;
const table = [
  header,
  rule,
  ...rows.map(
    ([name, get, digits, suffix]) =>
      `| ${name} | ${contenders.map((c) => format(get(c.id), digits, suffix)).join(' | ')} |`,
  ),
];

// Our ratio to every other contender on the per-step and memory figures (below 1.00 = we are ahead):
// measured ones paired by repetition, the install figures (the same in every run) as they are.
const ratioRows = rows.filter(([name]) => !name.startsWith('growth'));
const others = contenders.filter((c) => c.id !== 'ours');
const ratios = [
  `| ours ÷ … | ${others.map((c) => c.label).join(' | ')} |`,
  `|---|${others.map(() => '---:').join('|')}|`,
  ...ratioRows.map(
    ([name, get, , , paired]) =>
      `| ${name} | ${others
        .map((c) => {
          const a = get('ours');
          const b = get(c.id);
          const ratio = paired ? paired(c.id) : a !== undefined && b ? a / b : undefined;
          return ratio !== undefined ? `${ratio.toFixed(2)}×` : '–';
        })
        .join(' | ')} |`,
  ),
];

const failures = Object.entries(errors).map(([key, message]) => `- ${key} failed: ${message}`);
if (SCENARIOS) {
  // A quick look: the contenders' figures only, no in-process extras.
  console.log(`\n${[...table, '', ...ratios, ...(failures.length ? ['', ...failures] : [])].join('\n')}\n`);
  process.exit(failures.length > 0 ? 1 : 0);
}

const reducer = reducerThroughput();
const own50 = await ownWorkPerStep(50);
const own400 = await ownWorkPerStep(400);
const tokens = await tokenCounting();
const saved = [await checkpointedRuns(100), await checkpointedRuns(2000)];
// The hidden cost of safety: Python per call under each isolation, and the confined editor's speed.
const python = await pythonCost({ calls: 20 });
// A sandbox per provider: making one (a run's first call pays it) and a python_execute call through it.
const sandboxes = await sandboxCost({ calls: 10 }).catch((error) => {
  errors['sandbox cost'] = error.message;
  return {};
});
const editorOps = await editorOpsPerSecond();
// What a browser step costs in model input: our page state against OpenManus's and Playwright's full snapshot.
const pageStates = await browserStateTokens().catch((error) => {
  errors['browser page state'] = error.message;
  return undefined;
});
// Many runs in one process, in a process of its own: memory per run, the event loop's worst delay.
const many = await manyRuns(1000).catch((error) => {
  errors['many runs'] = error.message;
  return undefined;
});
// The same with different agents at once: Manus with Python, browser agents, MCP agents on one client, adders.
const mixed = await manyRuns(1000, '--mixed').catch((error) => {
  errors['many mixed runs'] = error.message;
  return undefined;
});
// The durable engine's added cost per step, and 2 worker processes against 1, on a throwaway Postgres.
const durable = await durableCost().catch((error) => ({ error: error.message }));
// What a task costs in input tokens and money, every contender on the same scripted tasks (cost.mjs).
const cost = await costTable({ only: ONLY }).catch((error) => {
  errors['cost per task'] = error.message;
  return undefined;
});
if (cost?.failed) errors['cost per task'] = 'a run failed (see the notes under its table)';
const perStep = (r) => `${r.first.toFixed(0)} → ${r.last.toFixed(0)}`;
const checkpoints = [
  '',
  'Checkpointed runs: µs per step (model instant, one tool call per step, a save after every transition), over the first → the last tenth of the run:',
  '',
  '| run | no checkpoint | memory store | file store (appends what changed) | whole state as JSON per transition |',
  '|---|---:|---:|---:|---:|',
  ...saved.map(
    (r) =>
      `| ${r.steps} steps | ${perStep(r.none)} | ${perStep(r.memory)} | ${perStep(r.file)} | ${perStep(r.naive)} |`,
  ),
];
const serialOverParallel =
  (fig('raw', 'parallel', 'msPerStep') ?? Number.NaN) / (fig('ours', 'parallel', 'msPerStep') ?? Number.NaN);
const extras = [
  `- Pure reducer: ${Math.round(reducer.transitionsPerSecond).toLocaleString('en-US')} transitions per second on a ${reducer.messages}-message state (request building included).`,
  `- Our own work per step (driver, reducer, a tool; an instant in-process model): ${own50.toFixed(0)} µs at 50 steps, ${own400.toFixed(0)} µs at 400 — flat as the history grows.`,
  `- Token counting per step on an 800-message run: ${tokens.memoUs.toFixed(0)} µs with the per-message memo, ${(tokens.freshUs / 1000).toFixed(1)} ms without it.`,
  `- Parallel tool turns: ${serialOverParallel.toFixed(1)}× faster than the serial loop (5 calls of 50 ms per turn).`,
  `- python_execute per call (\`print(1)\`, median ms): ${Object.entries(python)
    .map(([mode, { median }]) => `${mode} ${median.toFixed(0)}`)
    .join(' · ')}.`,
  `- str_replace_editor (confined: no links followed, opened files re-checked): ${Math.round(editorOps).toLocaleString('en-US')} operations per second (create, view, str_replace).`,
  `- Sandboxes (median ms; docker only where a daemon and the test image are there): ${Object.entries(sandboxes)
    .map(
      ([provider, { startMs, callMs }]) =>
        `${provider}: made in ${startMs.toFixed(0)}, python_execute ${callMs.toFixed(0)}`,
    )
    .join(' · ')}.`,
  durable.error
    ? `- Durable runs (@openmanus/durable): not measured — ${durable.error}.`
    : `- Durable runs (@openmanus/durable: DBOS Transact on a local Postgres): ${durable.msPerStep.toFixed(1)} ms added per step against core's plain run (${durable.plainMsPerStep.toFixed(2)} ms per step; instant model, a tool call per step); ${durable.runs} runs of 4 steps at 50 ms per model call: ${durable.runsPerSecond.one.toFixed(1)} runs/s on 1 worker process, ${durable.runsPerSecond.two.toFixed(1)} on 2.`,
  ...(many
    ? [
        `- ${many.runs.toLocaleString('en-US')} runs started at once in one process (3 model calls each, one shared port): ${many.seconds} s, ${many.peakMb} MB at the peak (${many.kbPerRun} KB per run), worst event-loop delay ${many.worstDelayMs} ms; once they finished, the heap was ${many.heapLeftMb} MB above its warm baseline.`,
      ]
    : []),
  ...(mixed
    ? [
        `- ${mixed.runs.toLocaleString('en-US')} runs of different agents at once in one process (${Object.entries(
          mixed.kinds,
        )
          .map(([kind, count]) => `${count} ${kind}`)
          .join(
            ', ',
          )}; each answer checked to carry its own run's token): ${mixed.seconds} s, ${mixed.failed} failed, ${mixed.crossTalk} with another run's data, ${mixed.peakMb} MB at the peak in this process (${mixed.kbPerRun} KB per run; Chromium and Python run in processes of their own), worst event-loop delay ${mixed.worstDelayMs} ms; once they finished, the heap was ${mixed.heapLeftMb} MB above its warm baseline.`,
      ]
    : []),
];
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const meta = `${new Date().toISOString().slice(0, 10)} · ${os.cpus().length} × ${cpu} · Node ${process.version} · medians over ${REPS} processes per contender and figure (the faster of 2 runs in each); ratios are medians of the ratios within each repetition`;

const report = [
  meta,
  '',
  ...table,
  '',
  ...ratios,
  '',
  ...extras,
  ...checkpoints,
  ...(pageStates
    ? [
        '',
        'Browser page state, tokens (o200k_base) per step — OpenManus sends its JSON plus a full-page JPEG (quality 100) with every state:',
        '',
        ...browserStateTable(pageStates),
      ]
    : []),
  ...(failures.length ? ['', ...failures] : []),
].join('\n');
console.log(`\n${report}\n`);
if (cost) console.log(`${cost.markdown}\n`);

/** The README with the text between `<!-- name:start -->` and `<!-- name:end -->` replaced (if both are there). */
const withBlock = (readme, name, text) => {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  if (!readme.includes(start) || !readme.includes(end)) return readme;
  return `${readme.slice(0, readme.indexOf(start) + start.length)}\n${text}\n${readme.slice(readme.indexOf(end))}`;
};
// The pages that show the latest run (the docs site's Performance page, the README if it still has
// the blocks): the cost table, the timings; scripts/docs-pictures.mjs charts them from there.
if (!ONLY && !SCENARIOS) {
  for (const page of ['../README.md', '../docs/src/content/docs/performance/index.md']) {
    const path = here(page);
    if (!existsSync(path)) continue;
    const before = readFileSync(path, 'utf8');
    const withBench = withBlock(before, 'bench', report);
    const after = cost ? withBlock(withBench, 'cost', cost.markdown) : withBench;
    if (after === before) continue;
    writeFileSync(path, after);
    log(`${page.slice(3)} updated with this run.`);
  }
}
process.exit(failures.length > 0 ? 1 : 0);
