import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLlmFromConfig, createManus, createOpenAiLlm, describeConfigError, loadConfig } from '@openmanus/core';
import { type ScriptedAnswer, startOpenAiServer } from '@openmanus/core/testing';
import { cancelOnSigint, exitCodeOf, runTask, type SessionIo } from './session.js';

const bundled = (name: string) => fileURLToPath(new URL(`../demo/${name}`, import.meta.url));

export const demoTask = (workspace: string) =>
  `Analyse the sales data in ${workspace}/sales.csv: total revenue, revenue by region and by month, ` +
  'and the best-selling product. Write a Markdown report (report.md) and an HTML page (report.html) into the workspace.';

/** The recorded model replies, with this machine's workspace path put in. */
async function recordedTranscript(workspace: string): Promise<ScriptedAnswer[]> {
  const text = await readFile(bundled('transcript.json'), 'utf8');
  return JSON.parse(text.replaceAll('{{workspace}}', JSON.stringify(workspace).slice(1, -1))) as ScriptedAnswer[];
}

/**
 * `pnpm demo`: Manus analyses a bundled CSV and writes a report. Offline, a local
 * OpenAI-compatible server replays a recorded model and every tool is real; with an endpoint
 * configured (environment or config/config.toml) the same task runs live.
 */
export async function demo(io: SessionIo, cwd = process.cwd()): Promise<number> {
  const workspace = resolve(cwd, io.env.OPENMANUS_DEMO_WORKSPACE ?? 'workspace/demo');
  const live = Boolean(
    io.env.OPENAI_API_KEY ||
      io.env.OPENAI_BASE_URL ||
      io.env.OPENMANUS_CONFIG ||
      existsSync(resolve(cwd, 'config/config.toml')),
  );
  await rm(workspace, { recursive: true, force: true });
  await mkdir(workspace, { recursive: true });
  await copyFile(bundled('sales.csv'), resolve(workspace, 'sales.csv'));

  const server = live ? undefined : await startOpenAiServer({ script: await recordedTranscript(workspace) });
  let llm: ReturnType<typeof createOpenAiLlm>;
  if (server) {
    llm = createOpenAiLlm({ model: 'recorded-gpt-4o', apiKey: 'offline', baseURL: server.baseURL, maxRetries: 0 });
    io.stderr.write(
      'OpenManus-TS demo — offline: a local server replays recorded model replies; the tools really run.\n',
    );
  } else {
    const config = loadConfig({ cwd, env: io.env });
    if (!config.ok) {
      io.stderr.write(`openmanus demo: ${describeConfigError(config.error)}\n`);
      return 2;
    }
    llm = createLlmFromConfig(config.value, 'manus');
    io.stderr.write(
      `OpenManus-TS demo — live: model ${llm.model} (${config.value.llm.base_url ?? 'api.openai.com'}).\n`,
    );
  }
  io.stderr.write(`Workspace: ${workspace}\n\n`);

  const cancel = cancelOnSigint(io, (code) => process.exit(code));
  try {
    const outcome = await runTask({
      agent: createManus({ workspace }),
      llm,
      task: demoTask(workspace),
      json: false,
      io,
      signal: cancel.signal,
    });
    const deliverables = ['report.md', 'report.html']
      .map((name) => resolve(workspace, name))
      .filter((path) => existsSync(path));
    io.stderr.write(
      deliverables.length > 0
        ? `\nDeliverables:\n${deliverables.map((path) => `  ${relative(cwd, path) || path}`).join('\n')}\n`
        : '\nNo deliverable was written.\n',
    );
    return deliverables.length === 2 ? exitCodeOf(outcome) : 1;
  } finally {
    cancel.dispose();
    await server?.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  process.exitCode = await demo({
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
}
