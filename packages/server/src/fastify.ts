import type { FastifyInstance } from 'fastify';
import type { AgentServer } from './server.js';

/**
 * The server as a Fastify plugin: `app.register(fastifyPlugin(server), { prefix: '/agents' })`.
 * Inside its own context the bodies are left unparsed (the server reads them, with its limit,
 * after its checks), and each request goes to the server's handler under the plugin's prefix.
 */
export function fastifyPlugin(server: Pick<AgentServer, 'nodeListener'>) {
  return async function openmanusServer(app: FastifyInstance): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    const prefix = app.prefix;
    const handle = (
      request: { raw: import('node:http').IncomingMessage; url: string },
      reply: {
        hijack(): void;
        raw: import('node:http').ServerResponse;
      },
    ) => {
      reply.hijack();
      // The server sees the path under the prefix, as with any other mount.
      const { raw } = request;
      const url = raw.url ?? '/';
      raw.url = url.startsWith(prefix) ? url.slice(prefix.length) || '/' : url;
      server.nodeListener(raw, reply.raw);
    };
    app.all('/', handle);
    app.all('/*', handle);
  };
}
