import Fastify from 'fastify';
import type { Runs } from './runs.js';

/** The agent's routes in a Fastify app: Fastify 5 sends the web Responses the runs answer with as they are. */
export function createFastifyApp(runs: Runs) {
  const app = Fastify();
  app.addHook('onRequest', async (request, reply) => {
    const refused = runs.refusal(request.headers.authorization);
    if (refused) return reply.send(refused);
  });
  app.post('/runs', (request) => runs.start(request.body));
  app.get<{ Params: { id: string } }>('/runs/:id', (request) => runs.read(request.params.id));
  app.get<{ Params: { id: string } }>('/runs/:id/events', (request) => runs.events(request.params.id));
  app.post<{ Params: { id: string } }>('/runs/:id/approve', (request) =>
    runs.decide(request.params.id, 'approve', request.body),
  );
  app.post<{ Params: { id: string } }>('/runs/:id/reject', (request) =>
    runs.decide(request.params.id, 'reject', request.body),
  );
  return app;
}
