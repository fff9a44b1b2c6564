import { POST as approve } from '../src/next/app/runs/[id]/approve/route.js';
import { GET as events } from '../src/next/app/runs/[id]/events/route.js';
import { POST as reject } from '../src/next/app/runs/[id]/reject/route.js';
import { GET as read } from '../src/next/app/runs/[id]/route.js';
import { POST as start } from '../src/next/app/runs/route.js';
import { useRuns } from '../src/next/runs.js';
import { describeServer } from './scenario.js';

// The route handlers called as Next.js calls them: a Request, and the dynamic segment's params as a promise.
describeServer('next.js', async (runs) => {
  useRuns(runs);
  const routes: Array<[RegExp, string, (request: Request, id: string) => Promise<Response>]> = [
    [/^\/runs$/, 'POST', (request) => start(request)],
    [/^\/runs\/([^/]+)$/, 'GET', (request, id) => read(request, { params: Promise.resolve({ id }) })],
    [/^\/runs\/([^/]+)\/events$/, 'GET', (request, id) => events(request, { params: Promise.resolve({ id }) })],
    [/^\/runs\/([^/]+)\/approve$/, 'POST', (request, id) => approve(request, { params: Promise.resolve({ id }) })],
    [/^\/runs\/([^/]+)\/reject$/, 'POST', (request, id) => reject(request, { params: Promise.resolve({ id }) })],
  ];
  return {
    fetch: async (path, init) => {
      const request = new Request(`http://localhost${path}`, init);
      for (const [pattern, method, handler] of routes) {
        const match = pattern.exec(path);
        if (match && request.method === method) return handler(request, match[1] ?? '');
      }
      return new Response(null, { status: 404 });
    },
    close: async () => undefined,
  };
});
