// The site's models guide (before its per-provider detail): its config.toml examples load and pick the port they say, and
// its embedding snippet runs as written with node, each provider's requests reaching a stand-in of
// its wire (the SDKs' own endpoint variables point them there; Google's and the local server's
// hosts are redirected by a preload, as a proxy would).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeConfigError, llmSettingsFor, loadConfig } from '../src/manus/config.js';
import { startAnthropicServer } from '../src/testing/anthropicServer.js';
import { startBedrockServer } from '../src/testing/bedrockServer.js';
import { startGeminiServer } from '../src/testing/geminiServer.js';
import { startOpenAiServer } from '../src/testing/server.js';
import { runSnippet } from './readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const page = await readFile(
  join(packageDir, '..', '..', 'docs', 'src', 'content', 'docs', 'guides', 'models.md'),
  'utf8',
);
const section = page.slice(0, page.indexOf('\n## Each provider in detail\n'));
const tomls = [...section.matchAll(/```toml\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

const configFrom = async (toml: string, env: Record<string, string>) => {
  const dir = await mkdtemp(join(tmpdir(), 'models-readme-'));
  closing.push(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'config'));
  await writeFile(join(dir, 'config', 'config.toml'), toml);
  const loaded = loadConfig({ cwd: dir, env });
  if (!loaded.isOk()) throw new Error(describeConfigError(loaded.error));
  return loaded.value;
};

describe("the site's models guide", () => {
  it('its config.toml examples load: OpenAI, Gemini with Manus on Claude, and Bedrock as OpenManus writes it', async () => {
    expect(tomls).toHaveLength(3);
    const openai = await configFrom(tomls[0] ?? '', {});
    expect(openai.llm).toMatchObject({ model: 'gpt-4o', base_url: 'https://api.openai.com/v1', api_key: 'sk-...' });
    const mixed = await configFrom(tomls[1] ?? '', { GEMINI_API_KEY: 'g', ANTHROPIC_API_KEY: 'a' });
    expect(llmSettingsFor(mixed)).toMatchObject({ api_type: 'google', api_key: 'g' });
    expect(llmSettingsFor(mixed, 'manus')).toMatchObject({
      api_type: 'anthropic',
      api_key: 'a',
      model: 'claude-sonnet-4-5',
    });
    const bedrock = await configFrom(tomls[2] ?? '', {});
    expect(bedrock.llm).toMatchObject({ api_type: 'aws', base_url: 'https://bedrock-runtime.us-west-2.amazonaws.com' });
  });

  it('its embedding snippet runs as written, each model on its own provider', async () => {
    const usage = { inputTokens: 1200, outputTokens: 5, cachedInputTokens: 1000 };
    const claude = await startAnthropicServer({ script: [{ content: 'Hi from Claude.', usage }] });
    const bedrock = await startBedrockServer({ script: [{ content: 'Hi from Bedrock.', usage }] });
    const gemini = await startGeminiServer({ script: [{ content: 'Hi from Gemini.', usage }] });
    const vllm = await startOpenAiServer({ script: [{ content: 'Hi from vLLM.', usage }] });
    closing.push(claude.close, bedrock.close, gemini.close, vllm.close);
    const preload = `
const routes = ${JSON.stringify({
      'https://generativelanguage.googleapis.com/v1beta': gemini.baseURL,
      'http://127.0.0.1:8000/v1': vllm.baseURL,
    })};
const fetchOf = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  for (const [from, to] of Object.entries(routes)) if (url.startsWith(from)) return fetchOf(to + url.slice(from.length), init);
  return fetchOf(input, init);
};`;
    const printed = await runSnippet(packageDir, snippet, {
      files: { 'preload.mjs': preload },
      nodeArgs: ['--import', './preload.mjs'],
      env: {
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: claude.baseURL,
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'secret',
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.endpoint,
        GOOGLE_GENERATIVE_AI_API_KEY: 'g-test',
      },
    });
    expect(printed.split('\n').filter(Boolean)).toEqual([
      'claude: Hi from Claude. (1200 in, 1000 cached)',
      'bedrock: Hi from Bedrock. (1200 in, 1000 cached)',
      'gemini: Hi from Gemini. (1200 in, 1000 cached)',
      'vllm: Hi from vLLM. (1200 in, 1000 cached)',
    ]);
    for (const server of [claude, bedrock, gemini, vllm]) expect(server.hits).toBe(1);
  });
});
