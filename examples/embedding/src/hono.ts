import { Hono } from 'hono';
import { jsonBody, type Runs } from './runs.js';

/** The agent's routes in a Hono app: the web Responses the runs answer with are returned as they are. */
export function createHonoApp(runs: Runs) {
  const app = new Hono();
  app.use(async (c, next) => runs.refusal(c.req.header('authorization')) ?? next());
  app.post('/runs', async (c) => runs.start(await jsonBody(c.req.raw)));
  app.get('/runs/:id', (c) => runs.read(c.req.param('id')));
  app.get('/runs/:id/events', (c) => runs.events(c.req.param('id')));
  app.post('/runs/:id/approve', async (c) => runs.decide(c.req.param('id'), 'approve', await jsonBody(c.req.raw)));
  app.post('/runs/:id/reject', async (c) => runs.decide(c.req.param('id'), 'reject', await jsonBody(c.req.raw)));
  return app;
}
