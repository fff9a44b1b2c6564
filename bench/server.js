// The model for every benchmark, in its own process so its CPU is not counted against any client.
// Stateless: the model name says the run's shape ("steps-50", "steps-10-x5": 10 turns of 5 calls);
// the reply depends only on how many tool results the request already carries, so any framework
// can run against it. A second port reports how many completions were served, so each run's
// round trips can be checked on the server side.
import { createServer } from 'node:http';
import { startOpenAiServer } from '@openmanus/core/testing';

const usage = { inputTokens: 1, outputTokens: 1 };
const server = await startOpenAiServer({
  // Thousands of 400-step histories: keep none of them (the server ran out of memory keeping them).
  keepRequests: false,
  script: (request) => {
    // "call-once" (the mixed runs of concurrency.mjs): the task ends with the one tool call to make,
    // as JSON; once its result is in, the answer is that result.
    if (request.model === 'call-once') {
      const result = request.messages.findLast((m) => m.role === 'tool');
      if (result) return { content: String(result.content), usage };
      const task = String(request.messages.find((m) => m.role === 'user')?.content);
      return { toolCalls: [JSON.parse(task.slice(task.indexOf('{')))], usage };
    }
    const steps = Number(/steps-(\d+)/.exec(String(request.model))?.[1] ?? 10);
    const parallel = Number(/-x(\d+)/.exec(String(request.model))?.[1] ?? 1);
    const done = Math.floor(request.messages.filter((m) => m.role === 'tool').length / parallel);
    if (done >= steps) return { content: 'done', usage };
    const toolCalls = Array.from({ length: parallel }, (_, i) => ({
      id: `call_${done}_${i}`,
      name: 'add',
      arguments: { a: done, b: i },
    }));
    return { toolCalls, usage };
  },
});
const stats = createServer((_req, res) => res.end(JSON.stringify({ completions: server.hits })));
await new Promise((resolve) => stats.listen(0, '127.0.0.1', resolve));
process.stdout.write(
  `${JSON.stringify({ baseURL: server.baseURL, stats: `http://127.0.0.1:${stats.address().port}` })}\n`,
);
const stop = () => {
  stats.close();
  server.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
// The bench holds our stdin open: when it dies, however it dies, the server goes too.
process.stdin.on('end', stop).resume();
