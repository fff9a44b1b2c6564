import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import {
  type Agent,
  type AgentState,
  compactRunItem,
  createRunEmitter,
  type LlmPort,
  type ResourcePool,
  type RunItem,
  type RunOutcome,
  run,
} from '@openmanus/core';
import { type TerminalLines, terminalHostCallbacks } from './hostPrompts.js';
import { createProgress } from './progress.js';
import { terminalText } from './terminalText.js';

export interface SessionIo {
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface TaskOptions {
  readonly agent: Agent;
  readonly llm: LlmPort;
  readonly task: string;
  readonly json: boolean;
  readonly io: SessionIo;
  readonly signal: AbortSignal;
  /** The conversation so far, to continue (the previous task's outcome `state`). */
  readonly state?: AgentState;
  /** Resources that outlive this task (a session's connections); the caller closes them. */
  readonly resources?: ResourcePool;
  /** What notes on stderr begin with (default `openmanus`). */
  readonly command?: string;
  /** The session's terminal, when it reads its tasks there too: the run's questions are asked through it. */
  readonly lines?: TerminalLines;
}

export const useColor = (stream: { isTTY?: boolean }, env: SessionIo['env']) =>
  Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';

/** Asks on the terminal; without one, says so, so the model can carry on without an answer. */
export async function askOnTerminal(io: SessionIo, question: string, lines?: TerminalLines): Promise<string> {
  if (!io.stdin.isTTY)
    return '(No one can answer: openmanus is not attached to a terminal. Continue with your best judgement.)';
  const prompt = `\nManus asks: ${terminalText(question)}\nYou: `;
  if (lines) return ((await lines.ask(prompt)) ?? '').trim();
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    return (await rl.question(prompt)).trim();
  } finally {
    rl.close();
  }
}

/** The task from the arguments, else from piped stdin, else asked for on the terminal. */
export async function readTask(positionals: readonly string[], io: SessionIo): Promise<string> {
  if (positionals.length > 0) return positionals.join(' ').trim();
  if (!io.stdin.isTTY) return readFileSync(0, 'utf8').trim();
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    return (await rl.question('Enter your task: ')).trim();
  } finally {
    rl.close();
  }
}

/** Runs one task with live progress (or JSON lines) and returns the outcome. */
export async function runTask(options: TaskOptions): Promise<RunOutcome> {
  const { io } = options;
  const emitter = createRunEmitter();
  const write = options.json
    ? (line: string) => io.stdout.write(`${line}\n`)
    : (line: string) => io.stderr.write(`${line}\n`);
  const render = options.json
    ? (item: RunItem) => write(JSON.stringify(compactRunItem(item)))
    : createProgress({ write, color: useColor(io.stderr, io.env) });
  for (const type of ['observation', 'effect', 'event', 'progress', 'log', 'result'] as const) emitter.on(type, render);
  const outcome = await run(options.agent, options.task, {
    llm: options.llm,
    signal: options.signal,
    emitter,
    onHuman: (question) => askOnTerminal(io, question, options.lines),
    // A tool's form for the person (an MCP server's elicitation) and its requests for the model.
    ...terminalHostCallbacks(io, options.command ?? 'openmanus', options.lines),
    ...(options.state ? { state: options.state } : {}),
    ...(options.resources ? { resources: options.resources } : {}),
  });
  if (!options.json && outcome.answer) io.stdout.write(`${terminalText(outcome.answer)}\n`);
  return outcome;
}

/** Exit codes: 0 done, 1 stopped short (steps, tokens, model error), 130 cancelled. */
export function exitCodeOf(outcome: RunOutcome): number {
  if (outcome.finishReason === 'answered' || outcome.finishReason === 'terminated') return 0;
  return outcome.finishReason === 'cancelled' ? 130 : 1;
}

/** The exit code of a task's outcome; when it stopped short, says why on stderr (`--json` output says it itself). */
export function reportOutcome(outcome: RunOutcome, io: SessionIo, json: boolean, command = 'openmanus'): number {
  const code = exitCodeOf(outcome);
  if (code !== 0 && !json) {
    io.stderr.write(
      `${command}: stopped (${outcome.finishReason ?? outcome.status}): ${terminalText(outcome.error?.message ?? 'no reason given')}\n`,
    );
  }
  return code;
}

/** First Ctrl+C cancels the run cleanly; a second one forces the process out. */
export function cancelOnSigint(
  io: SessionIo,
  exit: (code: number) => void,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) {
      io.stderr.write('\nForced exit.\n');
      exit(130);
      return;
    }
    io.stderr.write('\nCancelling… (press Ctrl+C again to force)\n');
    controller.abort('cancelled by Ctrl+C');
  };
  process.on('SIGINT', onSigint);
  return { signal: controller.signal, dispose: () => process.off('SIGINT', onSigint) };
}
