import { existsSync } from 'node:fs';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  BrowserUnavailableError,
  type BrowserUseOptions,
  browserOptionsFrom,
  findChrome,
  withBrowser,
} from '@openmanus/browser';
import {
  type Agent,
  createLlmFromConfig,
  createManus,
  createOpenAiLlm,
  describeConfigError,
  type LlmPort,
  llmSettingsFor,
  loadConfig,
  loadTranscript,
  messageOf,
  type OpenManusConfig,
  recordLlm,
} from '@openmanus/core';
import { startOpenAiServer, transcriptScript } from '@openmanus/core/testing';
import { cancelOnSigint, exitCodeOf, runTask, type SessionIo } from './session.js';
import { startTravelSite, type TravelSite, type TravelSiteOptions } from './travelSite.js';

const bundled = (name: string) => fileURLToPath(new URL(`../demo/${name}`, import.meta.url));

export const travelTask = (siteUrl: string, workspace: string) =>
  `Research the Kyoto travel site at ${siteUrl} in the browser and write a travel handbook as one HTML page, ` +
  `${workspace}/handbook.html: the top sights with their opening hours, admission fees and how to get there; ` +
  'getting around, with the passes and their prices; the festivals and their dates; and practical information ' +
  'with the emergency numbers.';

export const salesTask = (workspace: string) =>
  `Analyse the sales data in ${workspace}/sales.csv: total revenue, revenue by region and by month, ` +
  'and the best-selling product. Write a Markdown report (report.md) and an HTML page (report.html) into the workspace.';

/**
 * The browser options with the Chrome to start named (the one the demo checked is the one the
 * tool starts), or why there is none. A browser reached by `wss_url` or `cdp_url` needs no Chrome here.
 */
function withChrome(options: BrowserUseOptions, env: SessionIo['env']): BrowserUseOptions | { missing: string } {
  if (options.wssUrl || options.cdpUrl) return options;
  try {
    return { ...options, chromeInstancePath: findChrome(options.chromeInstancePath, env) };
  } catch (error) {
    if (error instanceof BrowserUnavailableError) return { missing: error.message };
    throw error;
  }
}

/** What the demo does: the task, the agent for it, the transcript that replays it offline, what it must write. */
interface DemoCase {
  readonly title: string;
  readonly task: string;
  readonly agent: Agent;
  readonly transcript: string;
  readonly placeholders: Readonly<Record<string, string>>;
  readonly deliverables: readonly string[];
  /** Why the run did not really do its job, though the deliverables may be there (checked after it). */
  readonly failure?: () => string | undefined;
}

function travelCase(workspace: string, site: TravelSite, pagesSeen: () => number, browser: BrowserUseOptions) {
  // The browser refuses this machine's addresses unless named: the site is the one it may reach.
  const allowHosts = [...(browser.allowHosts ?? []), new URL(site.url).host];
  return {
    title: `Manus researches the bundled Kyoto travel site (${site.url}) in a real browser and writes a handbook.`,
    task: travelTask(site.url, workspace),
    agent: withBrowser(createManus({ workspace }), { ...browser, allowHosts }),
    transcript: 'travel-transcript.json',
    placeholders: { workspace, site: site.url },
    deliverables: ['handbook.html'],
    failure: () => (pagesSeen() === 0 ? 'The browser never reached the travel site: see the errors above.' : undefined),
  } satisfies DemoCase;
}

const salesCase = (workspace: string): DemoCase => ({
  title: 'Manus analyses the bundled sales.csv and writes a report.',
  task: salesTask(workspace),
  agent: createManus({ workspace }),
  transcript: 'transcript.json',
  placeholders: { workspace },
  deliverables: ['report.md', 'report.html'],
});

/** The model: the recorded one served locally (no settings), else the configured endpoint. */
async function modelFor(
  settings: OpenManusConfig | undefined,
  job: DemoCase,
  io: SessionIo,
): Promise<{ llm: LlmPort; close(): Promise<void> }> {
  if (settings) {
    const llm = createLlmFromConfig(settings, 'manus');
    const { api_type: provider, base_url: endpoint } = llmSettingsFor(settings, 'manus');
    io.stderr.write(`OpenManus-TS demo — live: model ${llm.model} (${endpoint ?? `${provider || 'openai'}'s API`}).\n`);
    return { llm, close: async () => {} };
  }
  const transcript = await loadTranscript(bundled(job.transcript));
  const server = await startOpenAiServer({ script: transcriptScript(transcript, job.placeholders) });
  io.stderr.write(
    'OpenManus-TS demo — offline: a local server replays recorded model replies; the tools really run.\n',
  );
  const llm = createOpenAiLlm({ model: transcript.model, apiKey: 'offline', baseURL: server.baseURL, maxRetries: 0 });
  return { llm, close: () => server.close() };
}

export interface DemoOptions {
  /** Options for the travel site the demo serves (e.g. `onRequest`, to see what the browser fetched). */
  readonly site?: TravelSiteOptions;
  /** Record the run's model calls into this transcript file (`pnpm demo --record <file>`), with the demo's placeholders. */
  readonly record?: string;
}

/**
 * `pnpm demo`: Manus researches a bundled travel site in a real browser and writes an HTML
 * handbook; without a browser, it analyses a bundled CSV instead. Offline, a local
 * OpenAI-compatible server replays a recorded model and every tool is real (the browser too); with
 * an endpoint configured (environment or config/config.toml) the same task runs live.
 */
export async function demo(io: SessionIo, cwd = process.cwd(), options: DemoOptions = {}): Promise<number> {
  const workspace = resolve(cwd, io.env.OPENMANUS_DEMO_WORKSPACE ?? 'workspace/demo');
  const live = Boolean(
    io.env.OPENAI_API_KEY ||
      io.env.OPENAI_BASE_URL ||
      io.env.OPENMANUS_MODEL ||
      io.env.OPENMANUS_CONFIG ||
      existsSync(resolve(cwd, 'config/config.toml')),
  );
  const config = live ? loadConfig({ cwd, env: io.env }) : undefined;
  if (config && !config.isOk()) {
    io.stderr.write(`openmanus demo: ${describeConfigError(config.error)}\n`);
    return 2;
  }
  const browser = withChrome(config?.isOk() ? browserOptionsFrom(config.value.browser) : {}, io.env);

  await rm(workspace, { recursive: true, force: true });
  await mkdir(workspace, { recursive: true });
  let site: TravelSite | undefined;
  let job: DemoCase;
  if ('missing' in browser) {
    io.stderr.write(
      `No browser for the travel demo: ${browser.missing}\n` +
        'Then run `pnpm demo` again. Until then, here is the CSV analysis demo instead.\n\n',
    );
    await copyFile(bundled('sales.csv'), resolve(workspace, 'sales.csv'));
    job = salesCase(workspace);
  } else {
    let pages = 0;
    site = await startTravelSite({
      ...options.site,
      onRequest: (method, url) => {
        if (url.endsWith('.html') || url.endsWith('/')) pages++;
        options.site?.onRequest?.(method, url);
      },
    });
    job = travelCase(workspace, site, () => pages, browser);
  }
  const model = await modelFor(config?.isOk() ? config.value : undefined, job, io);
  io.stderr.write(`${job.title}\nWorkspace: ${workspace}\n\n`);

  const cancel = cancelOnSigint(io, (code) => process.exit(code));
  try {
    const outcome = await runTask({
      agent: job.agent,
      llm: options.record
        ? recordLlm(model.llm, { file: resolve(cwd, options.record), placeholders: job.placeholders })
        : model.llm,
      task: job.task,
      json: false,
      io,
      signal: cancel.signal,
    });
    const written = job.deliverables.map((name) => resolve(workspace, name)).filter((path) => existsSync(path));
    io.stderr.write(
      written.length > 0
        ? `\nDeliverables:\n${written.map((path) => `  ${relative(cwd, path) || path}`).join('\n')}\n`
        : '\nNo deliverable was written.\n',
    );
    const handbook = site && written[0];
    if (handbook) io.stderr.write(`Open the handbook: ${pathToFileURL(handbook).href}\n`);
    const failure = job.failure?.();
    if (failure) io.stderr.write(`${failure}\n`);
    return written.length === job.deliverables.length && !failure ? exitCodeOf(outcome) : 1;
  } finally {
    cancel.dispose();
    await model.close();
    await site?.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
  let record: string | undefined;
  try {
    record = parseArgs({ args: process.argv.slice(2), options: { record: { type: 'string' } } }).values.record;
  } catch (error) {
    io.stderr.write(`openmanus demo: ${messageOf(error)}\nUsage: pnpm demo [--record <transcript.json>]\n`);
    process.exit(2);
  }
  process.exitCode = await demo(io, process.cwd(), record ? { record } : {});
}
