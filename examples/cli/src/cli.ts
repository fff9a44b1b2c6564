#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLlmFromConfig, describeConfigError, llmSettingsFor, messageOf } from '@openmanus/core';
import { AGENT_NAMES, createCliAgent, isAgentName } from './agents.js';
import { answerCommand } from './answerCommand.js';
import { approveCommand } from './approveCommand.js';
import { cancelCommand } from './cancelCommand.js';
import { enqueueCommand } from './enqueueCommand.js';
import { flowCommand } from './flowCommand.js';
import { mcpCommand } from './mcpCommand.js';
import { mcpServerCommand } from './mcpServerCommand.js';
import {
  failure,
  isolationOf,
  loadCliConfig,
  maxStepsOption,
  providerOf,
  recordedTo,
  runSandboxOption,
} from './options.js';
import { sandboxProviderFor } from './sandboxProvider.js';
import { cancelOnSigint, readTask, reportOutcome, runTask, type SessionIo } from './session.js';
import { statusCommand } from './statusCommand.js';
import { studioCommand } from './studioCommand.js';
import { workerCommand } from './workerCommand.js';

const usage = `Usage: openmanus [options] [task...]
       openmanus --prompt "task"           (as OpenManus's main.py --prompt)
       openmanus mcp-server [options]      serve bash, browser_use, str_replace_editor and
                                           terminate over MCP
       openmanus mcp [options] [task...]   the MCP agent: a model with an MCP server's tools
       openmanus flow [options] [task...]  a planning flow (as OpenManus's run_flow.py): a plan,
                                           each step run by an agent, a summary
       openmanus worker [options]          a durable worker: runs queued tasks from Postgres
       openmanus enqueue [options] [task...]
                                           queues a task (--flow: as a planning flow) for
                                           the workers and follows it
       openmanus status <runId>            where a queued task (or flow) is, what it waits for
       openmanus approve <runId> [--reject <reason>]
                                           approves (or rejects) the calls it waits on
       openmanus answer <runId> "<text>"   answers the question it asked a person
       openmanus cancel <runId>            stops it, on whichever worker runs it
       openmanus studio [options]          the studio on 127.0.0.1: inspect, approve, start,
                                           fork and replay the runs of a data directory
                                           (each has its own --help)

Runs an agent on a task; without a task, asks for one. The agents:
  manus          python_execute, str_replace_editor, ask_human, terminate, web_search (set up
                 by [search] in config.toml), web_fetch and browser_use (set up by [browser])
  swe            a programmer: bash, str_replace_editor and terminate
  data_analysis  python_execute, visualization_preparation, data_visualization (charts) and
                 terminate
  browser        a browser agent: browser_use (set up by [browser] in config.toml) and terminate
Each uses its own [llm.<name>] table of config.toml if there is one, else [llm].

Options:
  -p, --prompt <task>  the task (the same as giving it as arguments)
  --agent <name>       manus (default), swe, data_analysis or browser
  --config <file>      config.toml to use (default: config/config.toml, or the environment)
  --workspace <dir>    where the agent reads and writes files (default: ./workspace)
  --max-steps <n>      step limit (default 20)
  --model <name>       model to call, overriding the config; provider:model switches provider too
                       (anthropic:claude-sonnet-4-5, aws:<bedrock model id>, google:gemini-2.5-flash)
  --sandbox <mode>     isolation of python and bash: auto (default: bubblewrap where it works,
                       else the best the host allows), bwrap (no network, only the workspace
                       writable; refuses to run without it), none;
                       or a sandbox Manus works in, with bash and sandbox_vision added
                       (SandboxManus): local (the workspace on this host, commands under bubblewrap
                       where it works), docker (a container per run, [sandbox] of config.toml; also
                       what [sandbox] use_sandbox = true means when --sandbox is not given), daytona
                       (a Daytona cloud sandbox per run, [daytona] of config.toml; its desktop and
                       website links are printed, and sandbox_browser drives its browser); docker
                       and daytona need @openmanus/sandbox
  --json               print the run's events as JSON lines on stdout
  --record <file>      record the model's replies into a transcript file (JSON, rewritten after
                       each call), to replay offline as a regression test with replayLlm
  -h, --help           show this help

Environment: OPENAI_API_KEY, OPENAI_BASE_URL, OPENMANUS_MODEL, OPENMANUS_CONFIG, NO_COLOR.
Exit codes: 0 done, 1 stopped short, 2 bad input or config, 130 cancelled.`;

const parseArguments = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    options: {
      prompt: { type: 'string', short: 'p' },
      agent: { type: 'string', default: 'manus' },
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

/** The CLI, testable: returns the exit code instead of exiting. */
export async function main(argv: string[], io: SessionIo): Promise<number> {
  // `pnpm openmanus -- --json task` hands the `--` through: drop it.
  const args = argv[0] === '--' ? argv.slice(1) : argv;
  if (args[0] === 'flow') return flowCommand(args.slice(1), io);
  if (args[0] === 'worker') return workerCommand(args.slice(1), io);
  if (args[0] === 'enqueue') return enqueueCommand(args.slice(1), io);
  if (args[0] === 'status') return statusCommand(args.slice(1), io);
  if (args[0] === 'approve') return approveCommand(args.slice(1), io);
  if (args[0] === 'answer') return answerCommand(args.slice(1), io);
  if (args[0] === 'cancel') return cancelCommand(args.slice(1), io);
  if (args[0] === 'studio') return studioCommand(args.slice(1), io);
  if (args[0] === 'mcp-server') return mcpServerCommand(args.slice(1), io);
  if (args[0] === 'mcp') return mcpCommand(args.slice(1), io, { cliScript: fileURLToPath(import.meta.url) });
  const fail = failure(io, 'openmanus');
  let parsed: ReturnType<typeof parseArguments>;
  try {
    parsed = parseArguments(args);
  } catch (error) {
    return fail(`${messageOf(error)}\n\n${usage}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  const maxSteps = maxStepsOption(values['max-steps']);
  if (!maxSteps.isOk()) return fail(maxSteps.error);
  const agentName = values.agent;
  if (!isAgentName(agentName)) {
    const choices = AGENT_NAMES.map((name) => `"${name}"`);
    return fail(`--agent must be ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}, got "${agentName}"`);
  }
  const sandbox = runSandboxOption(values.sandbox);
  if (!sandbox.isOk()) return fail(sandbox.error);
  const config = loadCliConfig(values, io, 'openmanus');
  if (!config.isOk()) return fail(describeConfigError(config.error));

  const task = values.prompt !== undefined ? values.prompt.trim() : await readTask(positionals, io);
  if (!task) return fail('the task is empty: give one as an argument, or type it at the prompt.');

  // Each agent's `[llm.<name>]` profile: its model, and how much input one request may carry.
  const { max_input_tokens: maxInputTokens } = llmSettingsFor(config.value, agentName);
  const workspace = values.workspace ?? config.value.agent.workspace ?? 'workspace';
  const isolation = isolationOf(sandbox.value, config.value.agent.sandbox);
  const sandboxTable = config.value.sections.sandbox;
  const providerName = providerOf(sandbox.value, sandboxTable);
  // The browser agent drives a browser on this host: there is no sandbox for it to run in.
  if (providerName && agentName === 'browser') {
    const why = sandbox.value ? `--sandbox ${providerName}` : '[sandbox] use_sandbox = true in config.toml';
    return fail(
      `${why} runs Manus, swe or data_analysis in a sandbox: use it with --agent manus|swe|data_analysis (or --sandbox auto|bwrap|none)`,
    );
  }
  const sandboxed = providerName
    ? await sandboxProviderFor(providerName, {
        workspace,
        isolation,
        config: config.value,
        onNotice: (line) => io.stderr.write(`${line}\n`),
      })
    : undefined;
  if (sandboxed && !sandboxed.isOk()) return fail(sandboxed.error);
  const agent = createCliAgent(agentName, {
    workspace,
    maxSteps: maxSteps.value ?? config.value.agent.maxSteps ?? 20,
    sandbox: isolation,
    ...(sandboxed ? { sandboxed: sandboxed.value } : {}),
    ...(maxInputTokens ? { maxInputTokens } : {}),
    search: config.value.search,
    browser: config.value.browser,
  });
  const llm = recordedTo(values.record, createLlmFromConfig(config.value, agentName), workspace);
  const cancel = cancelOnSigint(io, (code) => process.exit(code));
  try {
    const outcome = await runTask({ agent, llm, task, json: values.json, io, signal: cancel.signal });
    return reportOutcome(outcome, io, values.json);
  } finally {
    cancel.dispose();
  }
}

const io: SessionIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
process.exitCode = await main(process.argv.slice(2), io);
