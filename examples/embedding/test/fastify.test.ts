import type { AddressInfo } from 'node:net';
import { createFastifyApp } from '../src/fastify.js';
import { describeServer } from './scenario.js';

// A real listen on a free port of 127.0.0.1, reached with fetch.
describeServer('fastify', async (runs) => {
  const app = createFastifyApp(runs);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { fetch: (path, init) => fetch(`http://127.0.0.1:${port}${path}`, init), close: () => app.close() };
});
