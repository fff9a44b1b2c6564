import { afterEach } from 'vitest';
import { createOpenAiLlm } from '../src/index.js';
import { type OpenAiServer, type RecordedRequest, type ScriptEntry, startOpenAiServer } from '../src/testing/index.js';

/** Local OpenAI-compatible servers for a test file, closed after each test, and ports that talk to them. */
export function useOpenAiServers({ maxRetries }: { maxRetries: number }) {
  const servers: OpenAiServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  const serve = async (script: ScriptEntry<RecordedRequest>[]) => {
    const server = await startOpenAiServer({ script });
    servers.push(server);
    return server;
  };
  const llmFor = (server: OpenAiServer, extra: Partial<Parameters<typeof createOpenAiLlm>[0]> = {}) =>
    createOpenAiLlm({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries, ...extra });
  return { serve, llmFor };
}
