import { createHonoApp } from '../src/hono.js';
import { describeServer } from './scenario.js';

// Hono's app.request: the app's fetch, with no server.
describeServer('hono', async (runs) => {
  const app = createHonoApp(runs);
  return { fetch: async (path, init) => app.request(path, init), close: async () => undefined };
});
