import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import express, { type Express, type Response as ExpressResponse } from 'express';
import type { Runs } from './runs.js';

/** Writes a web Response (the runs' answers) to Express's response; a client that leaves ends the stream. */
async function send(res: ExpressResponse, response: Response) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  await pipeline(Readable.fromWeb(response.body as ReadableStream), res).catch(() => undefined);
}

/** The agent's routes in an Express app. */
export function createExpressApp(runs: Runs): Express {
  const app = express();
  app.use((req, res, next) => {
    const refused = runs.refusal(req.headers.authorization);
    if (refused) return void send(res, refused);
    next();
  });
  app.use(express.json());
  app.post('/runs', (req, res) => send(res, runs.start(req.body)));
  app.get('/runs/:id', async (req, res) => send(res, await runs.read(req.params.id)));
  app.get('/runs/:id/events', async (req, res) => send(res, await runs.events(req.params.id)));
  app.post('/runs/:id/approve', async (req, res) => send(res, await runs.decide(req.params.id, 'approve', req.body)));
  app.post('/runs/:id/reject', async (req, res) => send(res, await runs.decide(req.params.id, 'reject', req.body)));
  return app;
}
