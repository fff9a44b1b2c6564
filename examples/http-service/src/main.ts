import { resolve } from 'node:path';
import { createLlmFromConfig, createManus, describeConfigError, loadConfig } from '@openmanus/core';
import { loopbackHosts } from './access.js';
import { createAgentService } from './service.js';

// Manus as a service: every python_execute call waits for a client's approval.
const config = loadConfig();
if (!config.ok) {
  console.error(describeConfigError(config.error));
  process.exit(2);
}
const port = Number(process.env.PORT ?? 8080);
const list = (value: string | undefined) => (value ?? '').split(',').flatMap((item) => item.trim() || []);
// What Python did cannot be checked from here: after a crash during a call, the model is told
// it may or may not have happened instead of the code running a second time.
const manus = createManus({
  workspace: resolve('workspace/service'),
  approvals: ['python_execute'],
  atMostOnce: ['python_execute'],
});

try {
  const service = await createAgentService({
    agent: manus,
    llm: createLlmFromConfig(config.value, 'manus'),
    // Outside the agent's workspace: the token and the runs are not the model's to read.
    dataDir: resolve(process.env.OPENMANUS_SERVICE_DATA ?? 'workspace/service-data'),
    token: process.env.OPENMANUS_SERVICE_TOKEN || undefined,
    allowedHosts: [...loopbackHosts(port), ...list(process.env.OPENMANUS_SERVICE_HOSTS)],
    allowedOrigins: list(process.env.OPENMANUS_SERVICE_ORIGINS),
  });
  const { token } = service;
  if (token.created) console.log(`new service token (saved in ${token.file}, mode 600):\n\n  ${token.value}\n`);
  else console.log(`service token: ${token.file ? `in ${token.file}` : 'from OPENMANUS_SERVICE_TOKEN'}`);
  service.server.listen(port, '127.0.0.1', async () => {
    const resumed = await service.recover();
    const quarantined = service.quarantined().length;
    console.log(
      `listening on http://127.0.0.1:${port} (resumed ${resumed.length} unfinished runs` +
        `${quarantined ? `, quarantined ${quarantined} unreadable ones` : ''})`,
    );
  });
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
}
