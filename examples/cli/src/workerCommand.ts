import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { createLlmFromConfig, describeConfigError, messageOf } from '@openmanus/core';
import { startWorker, type WorkerAgent, type WorkerFlow } from '@openmanus/durable';
import { AGENT_NAMES, type AgentSettings, profiledAgent } from './agents.js';
import {
  cliVersion,
  DURABLE_FLOW,
  databaseUrlOption,
  durableArgs,
  durableUsage,
  workerKeyOption,
} from './durableOptions.js';
import { useDataAnalysisAgent } from './flowOptions.js';
import { failure, loadCliConfig, maxStepsOption, namesOption, sandboxOption } from './options.js';
import type { SessionIo } from './session.js';

export const workerUsage = `Usage: openmanus worker [options]

Starts a durable worker: it takes runs that \`openmanus enqueue\` (or any durable client) put on
the Postgres-backed queue and runs them with this CLI's agents (${AGENT_NAMES.join(', ')}),
each model and tool call a step recorded in Postgres. It runs planning flows too
(\`openmanus enqueue --flow\`, the flow named "${DURABLE_FLOW}"): the plan and the summary with [llm],
each step a run of manus, or of data_analysis when [runflow] use_data_analysis_agent = true. A worker restarted under its id resumes the runs it had
in flight; the runs of a worker that does not come back are handed on to a live one.
Ctrl+C or SIGTERM stops it cleanly. It takes people's approvals, answers and cancels only when
signed with its decision key (--key-file): on first use it creates the key file (0600); give the
same key to every worker and to whoever approves, answers or cancels.

Options:
${durableUsage}
  --worker-id <id>      unique among live workers and the same across restarts (default: the
                        host name)
  --concurrency <n>     most runs at once (default 10; a setting of the shared queue, so the
                        worker started last sets it for all: give every worker the same)
  --app-version <v>     runs resume only on workers of the version they started on: bump it when
                        the agents change (default: this CLI's version, ${cliVersion()})
  --approve <tools>     calls of these tools (comma-separated, e.g. python_execute,bash) wait for
                        a person: \`openmanus approve <runId>\` (or --reject) from any machine
  --continue-every <n>  a run continues as a fresh workflow every n model turns, so a replay after
                        a crash goes back at most n turns (default 50; change it with --app-version)
  --config <file>, --workspace <dir>, --max-steps <n>, --model <name>: as for \`openmanus\`
  --sandbox <mode>      isolation of python and bash: auto (default), bwrap or none
  -h, --help            show this help`;

const parseArguments = (args: string[]) =>
  parseArgs({
    args,
    options: {
      ...durableArgs,
      'worker-id': { type: 'string' },
      concurrency: { type: 'string' },
      'app-version': { type: 'string' },
      approve: { type: 'string' },
      'continue-every': { type: 'string' },
      config: { type: 'string' },
      workspace: { type: 'string' },
      'max-steps': { type: 'string' },
      model: { type: 'string' },
      sandbox: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });

/** Resolves on the first SIGINT or SIGTERM. */
const stopSignal = () =>
  new Promise<string>((resolve) => {
    const on = (signal: string) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });

/** `openmanus worker`: serves the CLI's agents from the durable queue until SIGINT or SIGTERM. */
export async function workerCommand(argv: string[], io: SessionIo): Promise<number> {
  const fail = failure(io, 'openmanus worker');
  let parsed: ReturnType<typeof parseArguments>;
  try {
    parsed = parseArguments(argv);
  } catch (error) {
    return fail(`${messageOf(error)}\n\n${workerUsage}`);
  }
  const { values } = parsed;
  if (values.help) {
    io.stdout.write(`${workerUsage}\n`);
    return 0;
  }
  const databaseUrl = databaseUrlOption(values, io);
  if (!databaseUrl.isOk()) return fail(databaseUrl.error);
  const concurrency = Number(values.concurrency ?? 10);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    return fail(`--concurrency must be a positive whole number, got "${values.concurrency}"`);
  }
  const continueEvery = Number(values['continue-every'] ?? 50);
  if (!Number.isInteger(continueEvery) || continueEvery < 1) {
    return fail(`--continue-every must be a positive whole number, got "${values['continue-every']}"`);
  }
  const approvals = namesOption(values.approve);
  const workerId = values['worker-id'] ?? hostname();
  if (!workerId.trim()) return fail('--worker-id is empty');
  const maxSteps = maxStepsOption(values['max-steps']);
  if (!maxSteps.isOk()) return fail(maxSteps.error);
  const sandbox = sandboxOption(values.sandbox);
  if (!sandbox.isOk()) return fail(sandbox.error);
  const config = loadCliConfig(values, io, 'openmanus worker');
  if (!config.isOk()) return fail(describeConfigError(config.error));
  const dataAnalysis = useDataAnalysisAgent(config.value);
  if (!dataAnalysis.isOk()) return fail(describeConfigError(dataAnalysis.error));

  const settings: AgentSettings = {
    workspace: values.workspace ?? config.value.agent.workspace ?? 'workspace',
    maxSteps: maxSteps.value ?? config.value.agent.maxSteps ?? 20,
    sandbox: sandbox.value ?? config.value.agent.sandbox ?? 'auto',
    search: config.value.search,
    browser: config.value.browser,
  };
  // Each agent with its own `[llm.<name>]` profile, as `openmanus --agent <name>` runs it.
  const agents: Record<string, WorkerAgent> = {};
  for (const name of AGENT_NAMES) {
    agents[name] = {
      agent: profiledAgent(name, settings, config.value),
      llm: createLlmFromConfig(config.value, name),
      continueEvery,
      ...(approvals.length > 0 ? { approvals } : {}),
    };
  }
  // The planning flow of \`openmanus flow\`, its steps runs of this worker's agents.
  const flows: Record<string, WorkerFlow> = {
    [DURABLE_FLOW]: {
      agents: dataAnalysis.value ? ['manus', 'data_analysis'] : ['manus'],
      llm: createLlmFromConfig(config.value),
    },
  };
  const key = workerKeyOption(values, io);
  if (!key.isOk()) return fail(key.error);
  if (key.value.created)
    io.stderr.write(
      `openmanus worker: created the decision key file ${key.value.created} (0600): give the same key to every worker and to whoever approves, answers or cancels (--key-file or OPENMANUS_DURABLE_KEY)\n`,
    );
  const stopped = stopSignal();
  const applicationVersion = values['app-version'] ?? cliVersion();
  let worker: Awaited<ReturnType<typeof startWorker>>;
  try {
    worker = await startWorker({
      databaseUrl: databaseUrl.value,
      decisionKey: key.value.key,
      workerId,
      applicationVersion,
      concurrency,
      agents,
      flows,
    });
  } catch (error) {
    return fail(`could not start: ${messageOf(error)}`, 1);
  }
  io.stderr.write(
    `openmanus worker ${workerId}: ready (version ${applicationVersion}, up to ${concurrency} runs at once; agents: ${AGENT_NAMES.join(', ')}${approvals.length > 0 ? `; approval needed for ${approvals.join(', ')}` : ''})\n`,
  );
  const signal = await stopped;
  io.stderr.write(`openmanus worker ${workerId}: ${signal}, stopping (runs in flight resume when it restarts)\n`);
  await worker.stop();
  return 0;
}
