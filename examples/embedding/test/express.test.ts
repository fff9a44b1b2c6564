import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createExpressApp } from '../src/express.js';
import { describeServer } from './scenario.js';

// A real listen on a free port of 127.0.0.1, reached with fetch.
describeServer('express', async (runs) => {
  const server = createExpressApp(runs).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    fetch: (path, init) => fetch(`http://127.0.0.1:${port}${path}`, init),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
});
