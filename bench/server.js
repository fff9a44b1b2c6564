// The model for every benchmark, in its own process so its CPU is not counted against any client.
// Stateless: the model name says how long the run is ("steps-50"); the reply depends only on
// how many tool results the request already carries, so any framework can run against it.
import { startOpenAiServer } from '@openmanus/core/testing';

const server = await startOpenAiServer({
  script: (request) => {
    const steps = Number(/steps-(\d+)/.exec(String(request.model))?.[1] ?? 10);
    const parallel = Number(/x(\d+)/.exec(String(request.model))?.[1] ?? 1);
    const done = request.messages.filter((m) => m.role === 'tool').length / parallel;
    if (done >= steps) return { content: 'done', usage: { inputTokens: 1, outputTokens: 1 } };
    const toolCalls = Array.from({ length: parallel }, (_, i) => ({
      id: `call_${done}_${i}`,
      name: 'add',
      arguments: { a: done, b: i },
    }));
    return { toolCalls, usage: { inputTokens: 1, outputTokens: 1 } };
  },
});
process.stdout.write(`${server.baseURL}\n`);
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
