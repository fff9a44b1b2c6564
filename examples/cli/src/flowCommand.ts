import { parseArgs } from 'node:util';
import { describeConfigError, type HostCallbacks, messageOf } from '@openmanus/core';
import { createPlanningFlow, type FlowItem, type FlowOutcome, streamFlow } from '@openmanus/flow';
import { type AgentName, type AgentSettings, profiledAgent } from './agents.js';
import { compactFlowItem } from './flowJson.js';
import { timeoutOption, useDataAnalysisAgent, whenBlockedOption } from './flowOptions.js';
import { createFlowProgress } from './flowProgress.js';
import { terminalHostCallbacks } from './hostPrompts.js';
import { createLiveView, type LiveView, streamAbove } from './liveView.js';
import {
  failure,
  isolationOf,
  loadCliConfig,
  maxStepsOption,
  providerOf,
  recordedTo,
  runSandboxOption,
} from './options.js';
import { createProfiledLlm } from './profiledLlm.js';
import { sandboxProviderFor } from './sandboxProvider.js';
import { askOnTerminal, cancelOnSigint, readTask, type SessionIo, useColor } from './session.js';
import { terminalText } from './terminalText.js';

export const flowUsage = `Usage: openmanus flow [options] [task...]

Runs a task as OpenManus's planning flow (run_flow.py): the model makes a plan, each step goes to
an executor agent — manus, and data_analysis when it is on: steps labelled [DATA_ANALYSIS] go to it —
and the model sums up at the end. Without a task, asks for one.

On a terminal the plan stays at the bottom, redrawn as its steps start ([→]), finish ([✓]) or
are blocked ([!], with the reason); each executor's progress goes above it, led by its step
(step 0 [manus] ...). Elsewhere each change of the plan is printed again. The summary comes last.

Options:
  -p, --prompt <task>     the task (the same as giving it as arguments)
  --data-analysis         add the data_analysis executor (as [runflow] use_data_analysis_agent = true)
  --when-blocked <what>   after a step is blocked: continue (default, as OpenManus), replan (ask the
                          model to change the plan) or stop (end the flow)
  --timeout <seconds>     longest the whole flow may run (default 3600)
  --fresh-memory          every step starts from an empty history (default: an executor remembers
                          its earlier steps, as OpenManus)
  --sandbox <mode>        auto, bwrap or none: how the executors' Python and shell are isolated on
                          this host; local or docker: the executors work in a sandbox of that
                          provider (manus as SandboxManus, data_analysis with its Python, data and
                          charts there), one per step, the workspace shared through it (docker:
                          bound at [sandbox] work_dir; also what use_sandbox = true means)
  --config <file>, --workspace <dir>, --max-steps <n> (per step), --model <name>,
  --json, --record <file>: as for \`openmanus\`
  -h, --help              show this help

The plan and the summary use [llm] of config.toml; each executor its own [llm.<name>] table if
there is one, else [llm].
Exit codes: 0 completed (blocked steps are in the plan and the summary), 1 stopped at a blocked
step (--when-blocked stop), out of time or failed, 2 bad input or config, 130 cancelled.`;

const parseArguments = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    options: {
      prompt: { type: 'string', short: 'p' },
      'data-analysis': { type: 'boolean', default: false },
      'when-blocked': { type: 'string' },
      timeout: { type: 'string' },
      'fresh-memory': { type: 'boolean', default: false },
      config: { type: 'string' },
      workspace: { type: 'string' },
      'max-steps': { type: 'string' },
      model: { type: 'string' },
      sandbox: { type: 'string' },
      json: { type: 'boolean', default: false },
      record: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });

/** Exit codes: 0 completed, 1 stopped at a blocked step, out of time or failed, 130 cancelled. */
export function flowExitCode(outcome: FlowOutcome): number {
  if (outcome.finishReason === 'completed') return 0;
  return outcome.finishReason === 'cancelled' ? 130 : 1;
}

/** The summary on stdout and, when the flow stopped short, why on stderr; returns the exit code. */
export function reportFlowOutcome(outcome: FlowOutcome, io: SessionIo, command: string): number {
  if (outcome.answer) io.stdout.write(`${terminalText(outcome.answer)}\n`);
  const code = flowExitCode(outcome);
  if (code !== 0)
    failure(
      io,
      command,
    )(`stopped (${outcome.finishReason ?? outcome.status}): ${outcome.error?.message ?? 'no reason given'}`);
  return code;
}

/**
 * The host's answers for the executors' runs, asked on the terminal with the plan out of the way: a
 * question for the person (`ask_human`), a tool's form (an MCP server's elicitation) and its
 * requests for the model (sampling); without a terminal, as `openmanus` answers them.
 */
export function flowHost(
  io: SessionIo,
  view: LiveView,
): Required<Pick<HostCallbacks, 'onHuman' | 'onElicitation' | 'onSampling'>> {
  const prompts = terminalHostCallbacks(io, 'openmanus flow');
  return {
    onHuman: (question) => view.aside(() => askOnTerminal(io, question)),
    onElicitation: (request, call) => view.aside(async () => prompts.onElicitation(request, call)),
    onSampling: (request, call) => view.aside(async () => prompts.onSampling(request, call)),
  };
}

/** `openmanus flow`: a task as a planning flow with a live view of its plan; returns the exit code. */
export async function flowCommand(argv: string[], io: SessionIo): Promise<number> {
  const fail = failure(io, 'openmanus flow');
  let parsed: ReturnType<typeof parseArguments>;
  try {
    parsed = parseArguments(argv);
  } catch (error) {
    return fail(`${messageOf(error)}\n\n${flowUsage}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${flowUsage}\n`);
    return 0;
  }
  const maxSteps = maxStepsOption(values['max-steps']);
  if (!maxSteps.isOk()) return fail(maxSteps.error);
  const sandbox = runSandboxOption(values.sandbox);
  if (!sandbox.isOk()) return fail(sandbox.error);
  const whenBlocked = whenBlockedOption(values['when-blocked']);
  if (!whenBlocked.isOk()) return fail(whenBlocked.error);
  const timeoutMs = timeoutOption(values.timeout);
  if (!timeoutMs.isOk()) return fail(timeoutMs.error);
  const config = loadCliConfig(values, io, 'openmanus flow');
  if (!config.isOk()) return fail(describeConfigError(config.error));
  const dataAnalysis = useDataAnalysisAgent(config.value);
  if (!dataAnalysis.isOk()) return fail(describeConfigError(dataAnalysis.error));
  const workspace = values.workspace ?? config.value.agent.workspace ?? 'workspace';
  const isolation = isolationOf(sandbox.value, config.value.agent.sandbox);
  // One provider for every executor: each step's run gets its own sandbox of it, on the same workspace.
  const providerName = providerOf(sandbox.value, config.value.sections.sandbox);
  const sandboxed = providerName
    ? await sandboxProviderFor(providerName, { workspace, isolation, config: config.value })
    : undefined;
  if (sandboxed && !sandboxed.isOk()) return fail(sandboxed.error);

  const task = values.prompt !== undefined ? values.prompt.trim() : await readTask(positionals, io);
  if (!task) return fail('the task is empty: give one as an argument, or type it at the prompt.');

  const settings: Omit<AgentSettings, 'maxInputTokens'> = {
    workspace,
    maxSteps: maxSteps.value ?? config.value.agent.maxSteps ?? 20,
    sandbox: isolation,
    ...(sandboxed ? { sandboxed: sandboxed.value } : {}),
    search: config.value.search,
    browser: config.value.browser,
  };
  // Each executor with its `[llm.<name>]` profile's input limit, as `openmanus --agent <name>`.
  const executor = (name: AgentName) => profiledAgent(name, settings, config.value);
  const flow = createPlanningFlow({
    agents: {
      manus: executor('manus'),
      ...(dataAnalysis.value || values['data-analysis'] ? { data_analysis: executor('data_analysis') } : {}),
    },
    ...(whenBlocked.value ? { whenBlocked: whenBlocked.value } : {}),
    executorMemory: values['fresh-memory'] ? 'clear' : 'keep',
    timeoutMs: timeoutMs.value,
  });
  const redraw = Boolean(io.stdout.isTTY) && io.env.TERM !== 'dumb';
  const view = createLiveView({
    out: io.stdout,
    log: io.stderr,
    redraw,
    sharedScreen: redraw && Boolean(io.stderr.isTTY),
  });
  const show = values.json
    ? (item: FlowItem) => io.stdout.write(`${JSON.stringify(compactFlowItem(item))}\n`)
    : createFlowProgress({
        view,
        color: { view: useColor(io.stdout, io.env), log: useColor(io.stderr, io.env) },
        width: () => (redraw ? (io.stdout as { columns?: number }).columns : undefined),
      });
  const cancel = cancelOnSigint({ ...io, stderr: streamAbove(view) }, (code) => process.exit(code));
  try {
    let outcome: FlowOutcome | undefined;
    const items = streamFlow(flow, task, {
      llm: recordedTo(values.record, createProfiledLlm(config.value), settings.workspace),
      signal: cancel.signal,
      ...flowHost(io, view),
    });
    for await (const item of items) {
      show(item);
      if (item.type === 'result') outcome = item.result;
    }
    view.close();
    if (!outcome) return fail('the flow ended without a result', 1);
    if (values.json) return flowExitCode(outcome);
    return reportFlowOutcome(outcome, io, 'openmanus flow');
  } finally {
    cancel.dispose();
  }
}
