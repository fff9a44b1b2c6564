// Checkpoint cost as a run grows: µs per save of the file store (appends a delta), the memory
// store, and a naive checkpoint (JSON.stringify of the whole state, then writeFile) per step.
// node bench/checkpoint.mjs, after pnpm -C packages/core build.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFileStore, createMemoryStore } from '@openmanus/core';
import { assistantMessage, initialState, userMessage } from '@openmanus/core/kernel';

const REPORTED_STEPS = [10, 100, 1000, 2000];
// Saves timed around each reported step; their median is the figure (one save is too noisy).
const WINDOW = 21;

/** The state after one more agent step: one assistant message with a tool call, one tool result. */
function nextStep(state) {
  const n = state.step;
  const call = { id: `call_${n}`, name: 'add', arguments: `{"a":${n},"b":${n + 1}}` };
  const result = {
    role: 'tool',
    content: `${2 * n + 1} (step ${n}: ${'x'.repeat(100)})`,
    toolCallId: call.id,
    name: 'add',
  };
  return {
    ...state,
    status: 'awaiting_llm',
    step: n + 1,
    requestSeq: state.requestSeq + 1,
    messages: [...state.messages, assistantMessage(`Adding ${n} and ${n + 1}.`, [call]), result],
    usage: {
      inputTokens: state.usage.inputTokens + 40 * n,
      outputTokens: state.usage.outputTokens + 20,
      llmCalls: n + 1,
    },
  };
}

/** Saves after each of `steps` steps; µs of every save, in order. */
async function timeSaves(steps, save) {
  let state = { ...initialState(), status: 'awaiting_llm', messages: [userMessage('Keep adding numbers.')] };
  const micros = [];
  for (let i = 0; i < steps; i++) {
    state = nextStep(state);
    const started = performance.now();
    await save(state, i);
    micros.push((performance.now() - started) * 1000);
  }
  return micros;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/** µs per save at each reported step (median of the saves around it) and over the whole run. */
function summarise(micros) {
  const atStep = {};
  for (const step of REPORTED_STEPS.filter((s) => s <= micros.length)) {
    const from = Math.max(0, step - 1 - Math.floor(WINDOW / 2));
    atStep[step] = median(micros.slice(from, from + WINDOW));
  }
  return { atStep, mean: micros.reduce((a, b) => a + b, 0) / micros.length };
}

/** µs per checkpoint for each approach, as the run reaches each reported step. */
export async function measureCheckpoints({ steps = 2000 } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'openmanus-checkpoint-bench-'));
  try {
    const fileStore = createFileStore(join(dir, 'store'));
    const memoryStore = createMemoryStore();
    const naiveFile = join(dir, 'naive.json');
    return {
      steps,
      fileStore: summarise(await timeSaves(steps, (state, version) => fileStore.save('run', state, version))),
      memoryStore: summarise(await timeSaves(steps, (state, version) => memoryStore.save('run', state, version))),
      naive: summarise(await timeSaves(steps, (state) => writeFile(naiveFile, JSON.stringify(state)))),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function printTable({ steps, fileStore, memoryStore, naive }) {
  const columns = [
    ['file store', fileStore],
    ['memory store', memoryStore],
    ['naive stringify+writeFile', naive],
  ];
  const cell = (micros) => (micros === undefined ? '' : micros < 10 ? micros.toFixed(2) : micros.toFixed(0));
  const rows = [
    ['step', ...columns.map(([name]) => name)],
    ...REPORTED_STEPS.filter((s) => s <= steps).map((step) => [
      String(step),
      ...columns.map(([, r]) => cell(r.atStep[step])),
    ]),
    [`mean of ${steps}`, ...columns.map(([, r]) => cell(r.mean))],
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  console.log(`µs per checkpoint (median of ${WINDOW} saves around the step; the mean includes compactions)`);
  for (const row of rows)
    console.log(row.map((text, i) => (i === 0 ? text.padEnd(widths[i]) : text.padStart(widths[i]))).join('  '));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printTable(await measureCheckpoints());
