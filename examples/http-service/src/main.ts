// `pnpm serve`: Manus served by @openmanus/server, with its studio to start, watch and approve
// runs. With no model configured, a local scripted model replays the recorded demo run (the
// tools really run).
import { existsSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import {
  createLlmFromConfig,
  createManus,
  createOpenAiLlm,
  describeConfigError,
  type LlmPort,
  loadConfig,
  messageOf,
} from '@openmanus/core';
import { createPlanningTool } from '@openmanus/flow';
import { createServer } from '@openmanus/server';
import { DEMO_TASK, startDemoModel } from './demoModel.js';

const env = process.env;
const fail = (message: string): never => {
  console.error(message);
  process.exit(2);
};
const list = (value: string | undefined) => (value ?? '').split(',').flatMap((item) => item.trim() || []);
/** A path as a person can type it from here: relative when it is under the current directory. */
const shown = (path: string) => {
  const near = relative(process.cwd(), path);
  return near.startsWith('..') || isAbsolute(near) ? path : near;
};

const live = Boolean(
  env.OPENAI_API_KEY || env.OPENAI_BASE_URL || env.OPENMANUS_CONFIG || existsSync(resolve('config/config.toml')),
);
/** The configured model, else the local scripted one. */
async function model(): Promise<LlmPort> {
  if (!live) {
    const server = await startDemoModel();
    return createOpenAiLlm({ model: 'scripted-demo', apiKey: 'offline', baseURL: server.baseURL, maxRetries: 0 });
  }
  const config = loadConfig();
  return config.isOk() ? createLlmFromConfig(config.value, 'manus') : fail(describeConfigError(config.error));
}

const port = Number(env.PORT ?? 8080);
// Every python_execute call waits for a client's approval (the rule is given here, where the
// agent is used). What Python did cannot be checked from here: after a crash during a call,
// the model is told it may or may not have happened instead of the code running a second time.
const manus = createManus({
  workspace: resolve(env.OPENMANUS_SERVICE_WORKSPACE ?? 'workspace/service'),
  extraTools: [createPlanningTool()],
  atMostOnce: ['python_execute'],
});

try {
  const llm = await model();
  const server = await createServer({
    agents: { manus },
    approvals: ['python_execute'],
    llm,
    // Outside the agent's workspace: the token and the runs are not the model's to read.
    dataDir: resolve(env.OPENMANUS_SERVICE_DATA ?? 'workspace/service-data'),
    ...(env.OPENMANUS_SERVICE_TOKEN ? { token: env.OPENMANUS_SERVICE_TOKEN } : {}),
    allowedHosts: list(env.OPENMANUS_SERVICE_HOSTS),
    allowedOrigins: list(env.OPENMANUS_SERVICE_ORIGINS),
  });
  const listening = await server.listen(port);
  const resumed = await server.recover();
  const quarantined = server.quarantined().length;
  const token = server.token ?? fail('the server has no token');
  console.log(
    `OpenManus-TS service — ${live ? `live: model ${llm.model}` : `offline: a local scripted model replays a recorded run (try: ${DEMO_TASK})`}\n` +
      `${token.created ? `new service token, saved in ${shown(token.file ?? '')} (mode 600)` : `service token: ${token.file ? shown(token.file) : 'from OPENMANUS_SERVICE_TOKEN'}`}\n` +
      `resumed ${resumed.length} unfinished runs${quarantined ? `, quarantined ${quarantined} unreadable ones` : ''}\n\n` +
      `Open http://127.0.0.1:${listening}/studio/#token=${token.value}\n`,
  );
} catch (error) {
  fail(messageOf(error));
}
