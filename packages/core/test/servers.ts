import { afterEach } from 'vitest';
import { createOpenAiLlm } from '../src/llm/openai.js';
import type { ScriptEntry } from '../src/testing/script.js';
import type { StandInOptions, StandInServer } from '../src/testing/scriptedHttp.js';
import { type OpenAiServer, type RecordedRequest, startOpenAiServer } from '../src/testing/server.js';

/**
 * A provider's stand-ins for a test file (or a `describe` block), each closed after its test:
 * `serve(script)` starts one answering from the script.
 */
export function useStandIns<Request, Server extends StandInServer<Request>>(
  start: (options: StandInOptions<Request>) => Promise<Server>,
): (script: ScriptEntry<Request>[]) => Promise<Server> {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (script) => {
    const server = await start({ script });
    servers.push(server);
    return server;
  };
}

/** Local OpenAI-compatible servers for a test file, closed after each test, and ports that talk to them. */
export function useOpenAiServers({ maxRetries }: { maxRetries: number }) {
  const serve = useStandIns<RecordedRequest, OpenAiServer>(startOpenAiServer);
  const llmFor = (server: OpenAiServer, extra: Partial<Parameters<typeof createOpenAiLlm>[0]> = {}) =>
    createOpenAiLlm({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries, ...extra });
  return { serve, llmFor };
}
