import { resolve } from 'node:path';
import { createLlmFromConfig, createManus, describeConfigError, loadConfig } from '@openmanus/core';
import { createAgentService } from './service.js';
import { FileStore } from './store.js';

// Manus as a service: every python_execute call waits for a client's approval.
const config = loadConfig();
if (!config.ok) {
  console.error(describeConfigError(config.error));
  process.exit(2);
}
const service = createAgentService({
  agent: createManus({ workspace: resolve('workspace/service'), approvals: ['python_execute'] }),
  llm: createLlmFromConfig(config.value, 'manus'),
  store: new FileStore(resolve('workspace/service-runs')),
});
const port = Number(process.env.PORT ?? 8080);
service.server.listen(port, '127.0.0.1', async () => {
  const resumed = await service.recover();
  console.log(`listening on http://127.0.0.1:${port} (resumed ${resumed.length} unfinished runs)`);
});
