import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type Agent,
  type AgentState,
  type ConfigError,
  createLlmFromConfig,
  describeConfigError,
  errAsync,
  type LlmPort,
  messageOf,
} from '@openmanus/core';
import { createServer } from '@openmanus/server';
import { createSqliteStore } from '@openmanus/sqlite';
import { AGENT_NAMES, type AgentSettings, profiledAgent } from './agents.js';
import { firstStopSignal } from './mcpServerCommand.js';
import { failure, loadCliConfig, maxStepsOption, namesOption, sandboxOption } from './options.js';
import type { SessionIo } from './session.js';
import { terminalText } from './terminalText.js';

export const studioUsage = `Usage: openmanus studio [--store <runs.db>] [--data-dir <dir>] [--port <n>] [options]

Serves the studio of @openmanus/server on http://127.0.0.1:<port>/studio/ over the runs kept in
<dir>: those of any app that serves its agents with createServer({ dataDir: <dir> }) and those
started here. Each run's timeline, model calls (tokens, cost, the exact request), its state at
any transition and what changed; approve or reject the calls it waits on, answer its questions,
start runs of this CLI's agents (${AGENT_NAMES.join(', ')}), fork a run from any transition (onto
another [llm.<name>] model) and replay it. Runs use [llm] of config.toml; with no model
configured the runs can still be inspected, and starting, continuing or forking one fails with
the reason.

Options:
  --store <file>     a SQLite store of runs (createSqliteStore's file, or a server's runs.db): the
                     studio shows its runs; its data dir is then the file's directory
  --data-dir <dir>   the server's files: runs.db (the runs, unless --store), journal.db (what the
                     studio shows), token (default: ./.openmanus)
  --port <n>         the port on 127.0.0.1 (default 8080; 0 picks a free one)
  --approve <tools>  calls of these tools (comma-separated, e.g. python_execute,bash) wait for
                     approval in the studio
  --config <file>, --workspace <dir>, --max-steps <n>, --model <name>: as for \`openmanus\`
  --sandbox <mode>   isolation of python and bash: auto (default), bwrap or none
  -h, --help         show this help

The page needs the token, kept in <dir>/token (0600): open the URL printed at the start (it
carries the token after #). Ctrl+C (or SIGTERM) stops it once the runs in flight have paused or
ended; a second Ctrl+C stops it at once (each run keeps its last checkpoint).`;

const parseArguments = (args: string[]) =>
  parseArgs({
    args,
    options: {
      store: { type: 'string' },
      'data-dir': { type: 'string' },
      port: { type: 'string', default: '8080' },
      approve: { type: 'string' },
      config: { type: 'string' },
      workspace: { type: 'string' },
      'max-steps': { type: 'string' },
      model: { type: 'string' },
      sandbox: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });

/**
 * loadConfig's one error that names neither a file nor a key: no config.toml and no model in the
 * environment. The studio still shows the runs then.
 */
const nothingConfigured = (error: ConfigError) => error.file === undefined && error.key === undefined;

/** A model that refuses every call with why there is none, so that a run started anyway says it. */
const noModel = (why: string): LlmPort => ({
  model: 'none',
  complete: () => errAsync({ kind: 'config', message: why }),
});

/** `openmanus studio`: serves the studio over a data directory until SIGINT or SIGTERM. */
export async function studioCommand(argv: string[], io: SessionIo): Promise<number> {
  const fail = failure(io, 'openmanus studio');
  let parsed: ReturnType<typeof parseArguments>;
  try {
    parsed = parseArguments(argv);
  } catch (error) {
    return fail(`${messageOf(error)}\n\n${studioUsage}`);
  }
  const { values } = parsed;
  if (values.help) {
    io.stdout.write(`${studioUsage}\n`);
    return 0;
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) {
    return fail(`--port must be a port number (0 to 65535), got "${values.port}"`);
  }
  const maxSteps = maxStepsOption(values['max-steps']);
  if (!maxSteps.isOk()) return fail(maxSteps.error);
  const sandbox = sandboxOption(values.sandbox);
  if (!sandbox.isOk()) return fail(sandbox.error);
  const approvals = namesOption(values.approve);
  const loaded = loadCliConfig(values, io, 'openmanus studio');
  if (!loaded.isOk() && !nothingConfigured(loaded.error)) return fail(describeConfigError(loaded.error));
  const config = loaded.isOk() ? loaded.value : undefined;

  const settings: AgentSettings = {
    workspace: values.workspace ?? config?.agent.workspace ?? 'workspace',
    maxSteps: maxSteps.value ?? config?.agent.maxSteps ?? 20,
    sandbox: sandbox.value ?? config?.agent.sandbox ?? 'auto',
    search: config?.search ?? {},
    browser: config?.browser ?? {},
  };
  const agents: Record<string, Agent> = {};
  for (const name of AGENT_NAMES) agents[name] = profiledAgent(name, settings, config);
  const llm = loaded.isOk() ? createLlmFromConfig(loaded.value) : noModel(loaded.error.message);
  // The studio forks a run onto another model by name: each [llm.<name>] profile.
  const models = config
    ? Object.fromEntries(Object.keys(config.profiles).map((name) => [name, createLlmFromConfig(config, name)]))
    : {};
  const storeFile = values.store === undefined ? undefined : resolve(values.store);
  const dataDir = resolve(values['data-dir'] ?? (storeFile ? dirname(storeFile) : '.openmanus'));
  let server: Awaited<ReturnType<typeof createServer>>;
  let store: ReturnType<typeof createSqliteStore<AgentState>> | undefined;
  try {
    store = storeFile ? createSqliteStore<AgentState>(storeFile) : undefined;
    server = await createServer({
      agents,
      llm,
      models,
      dataDir,
      ...(store ? { store } : {}),
      ...(approvals.length > 0 ? { approvals } : {}),
      log: (line) => io.stderr.write(`openmanus studio: ${terminalText(line)}\n`),
    });
  } catch (error) {
    store?.close();
    return fail(`cannot open ${storeFile ?? dataDir}: ${messageOf(error)}`, 1);
  }
  const signal = firstStopSignal();
  try {
    let listening: number;
    try {
      listening = await server.listen(port);
    } catch (error) {
      const busy = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? ': choose another --port' : '';
      return fail(`cannot serve on 127.0.0.1:${port}: ${messageOf(error)}${busy}`, 1);
    }
    io.stderr.write(
      [
        'openmanus studio: serving the studio',
        `  url:      http://127.0.0.1:${listening}/studio/#token=${server.token?.value ?? ''}`,
        ...(storeFile ? [`  store:    ${storeFile}`] : []),
        `  data:     ${dataDir}`,
        `  agents:   ${AGENT_NAMES.join(', ')}${approvals.length > 0 ? ` (approval needed for ${approvals.join(', ')})` : ''}`,
        config
          ? `  model:    ${llm.model}${Object.keys(models).length > 0 ? ` (forks onto ${Object.keys(models).join(', ')})` : ''}`
          : '  model:    none configured: runs can be inspected; starting, continuing or forking one needs config/config.toml or OPENAI_API_KEY',
        'Ctrl+C stops it.',
        '',
      ].join('\n'),
    );
    await signal.stopped;
    io.stderr.write('openmanus studio: stopping once the runs in flight have paused or ended (Ctrl+C again: now)\n');
    await server.idle();
    return 0;
  } finally {
    signal.dispose();
    await server.close();
    store?.close();
  }
}
