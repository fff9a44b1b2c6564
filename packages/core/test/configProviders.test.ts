// config.toml's providers: api_type picks the port, each provider's environment variables fill its
// key, `provider:model` switches provider, and profiles mix providers — each run end to end
// against a stand-in of the provider's wire.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { createLlmFromConfig, describeConfigError, llmSettingsFor, loadConfig } from '../src/manus/config.js';
import { splitModel } from '../src/manus/providerEnv.js';
import { run } from '../src/shell/run.js';
import { startAnthropicServer } from '../src/testing/anthropicServer.js';
import { startBedrockServer } from '../src/testing/bedrockServer.js';
import { startGeminiServer } from '../src/testing/geminiServer.js';
import { startOpenAiServer } from '../src/testing/server.js';
import { tempWorkspace } from './toolHelpers.js';

const made: string[] = [];
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function project(toml: string) {
  const dir = await tempWorkspace();
  made.push(dir);
  await mkdir(join(dir, 'config'));
  await writeFile(join(dir, 'config', 'config.toml'), toml);
  return dir;
}

const configOf = (result: ReturnType<typeof loadConfig>) => {
  if (!result.isOk()) throw new Error(describeConfigError(result.error));
  return result.value;
};
const errorOf = (result: ReturnType<typeof loadConfig>) =>
  result.isOk() ? 'no error' : describeConfigError(result.error);
const greeter = createAgent({ name: 'greeter', policies: defaultPolicies({ maxSteps: 2 }) });

describe('config.toml providers', () => {
  it('api_type = "anthropic" runs on the Messages API, its key from ANTHROPIC_API_KEY, not OPENAI_API_KEY', async () => {
    const server = await startAnthropicServer({ script: [{ content: 'Hello from Claude.' }] });
    closing.push(server.close);
    const cwd = await project(
      `[llm]\napi_type = "anthropic"\nmodel = "claude-sonnet-4-5"\nbase_url = "${server.baseURL}"\n`,
    );
    const config = configOf(
      loadConfig({ cwd, env: { ANTHROPIC_API_KEY: 'sk-ant-test', OPENAI_API_KEY: 'sk-openai' } }),
    );
    expect(config.llm.api_key).toBe('sk-ant-test');
    const outcome = await run(greeter, 'Hi', { llm: createLlmFromConfig(config) });
    expect(outcome.answer).toBe('Hello from Claude.');
    expect(server.requests[0]?.model).toBe('claude-sonnet-4-5');
  });

  it('api_type = "google" runs on the Gemini API', async () => {
    const server = await startGeminiServer({ script: [{ content: 'Hello from Gemini.' }] });
    closing.push(server.close);
    const cwd = await project(
      `[llm]\napi_type = "google"\nmodel = "gemini-2.5-flash"\nbase_url = "${server.baseURL}"\n`,
    );
    const config = configOf(loadConfig({ cwd, env: { GEMINI_API_KEY: 'g-test' } }));
    const outcome = await run(greeter, 'Hi', { llm: createLlmFromConfig(config) });
    expect(outcome.answer).toBe('Hello from Gemini.');
    expect(server.paths[0]).toContain('gemini-2.5-flash');
  });

  it('profiles mix providers: Manus on Claude, the rest on an OpenAI-compatible endpoint', async () => {
    const claude = await startAnthropicServer({ script: [{ content: 'from Claude' }] });
    const openai = await startOpenAiServer({ script: [{ content: 'from OpenAI' }] });
    closing.push(claude.close, openai.close);
    const cwd = await project(
      `[llm]\nmodel = "gpt-4o-mini"\nbase_url = "${openai.baseURL}"\napi_key = "sk-openai"\n\n` +
        `[llm.manus]\napi_type = "anthropic"\nmodel = "claude-sonnet-4-5"\nbase_url = "${claude.baseURL}"\napi_key = "sk-ant"\n`,
    );
    const config = configOf(loadConfig({ cwd, env: {} }));
    expect((await run(greeter, 'Hi', { llm: createLlmFromConfig(config, 'manus') })).answer).toBe('from Claude');
    expect((await run(greeter, 'Hi', { llm: createLlmFromConfig(config) })).answer).toBe('from OpenAI');
  });

  it("OPENMANUS_MODEL (the CLI's --model) takes provider:model, dropping the other provider's key and endpoint", async () => {
    const cwd = await project(
      '[llm]\nmodel = "gpt-4o"\napi_key = "sk-openai"\nbase_url = "https://api.openai.com/v1"\n',
    );
    const switched = configOf(
      loadConfig({ cwd, env: { OPENMANUS_MODEL: 'anthropic:claude-opus-4-1', ANTHROPIC_API_KEY: 'sk-ant' } }),
    );
    expect(switched.llm).toMatchObject({ api_type: 'anthropic', model: 'claude-opus-4-1', api_key: 'sk-ant' });
    expect(switched.llm.base_url).toBeUndefined();
    // Without the provider's key, the error says which key and which variable.
    expect(errorOf(loadConfig({ cwd, env: { OPENMANUS_MODEL: 'anthropic:claude-opus-4-1' } }))).toMatch(
      /\[llm\]\.api_key: is required for api_type = "anthropic" \(or set ANTHROPIC_API_KEY\)/,
    );
    // A model of the same provider keeps the table's key.
    expect(configOf(loadConfig({ cwd, env: { OPENMANUS_MODEL: 'openai:gpt-4.1' } })).llm).toMatchObject({
      model: 'gpt-4.1',
      api_key: 'sk-openai',
    });
  });

  it('an environment alone makes an Anthropic config', () => {
    const config = configOf(
      loadConfig({
        cwd: '/nonexistent-dir',
        env: { OPENMANUS_MODEL: 'anthropic:claude-haiku-4-5', ANTHROPIC_API_KEY: 'k' },
      }),
    );
    expect(llmSettingsFor(config)).toMatchObject({ api_type: 'anthropic', model: 'claude-haiku-4-5', api_key: 'k' });
  });

  it('api_type = "aws" runs on Bedrock\'s Converse API, signed with the AWS credential chain', async () => {
    const server = await startBedrockServer({ script: [{ content: 'Hello from Bedrock.' }] });
    closing.push(server.close);
    const cwd = await project(
      `[llm]\napi_type = "aws"\nmodel = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"\nbase_url = "${server.endpoint}"\nregion = "us-west-2"\napi_key = "bear"\n`,
    );
    const config = configOf(loadConfig({ cwd, env: {} }));
    const credentials = { AWS_ACCESS_KEY_ID: 'AKIDTEST', AWS_SECRET_ACCESS_KEY: 'secret' };
    const saved = { ...process.env };
    Object.assign(process.env, credentials);
    try {
      const outcome = await run(greeter, 'Hi', { llm: createLlmFromConfig(config) });
      expect(outcome.answer).toBe('Hello from Bedrock.');
    } finally {
      for (const key of Object.keys(credentials)) if (saved[key] === undefined) delete process.env[key];
    }
    expect(server.paths[0]).toContain('/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/');
  });

  it('api_type = "aws" as OpenManus writes it: no key needed (the AWS credential chain), the endpoint a bare host', async () => {
    const cwd = await project(
      '[llm]\napi_type = "aws"\nmodel = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"\nbase_url = "bedrock-runtime.us-west-2.amazonaws.com"\napi_key = "bear"\n',
    );
    expect(configOf(loadConfig({ cwd, env: {} })).llm).toMatchObject({
      api_type: 'aws',
      base_url: 'https://bedrock-runtime.us-west-2.amazonaws.com',
    });
  });

  it('bad provider config is a clear error naming the key', async () => {
    expect(
      errorOf(loadConfig({ cwd: await project('[llm]\napi_type = "claude"\nmodel = "x"\napi_key = "k"\n'), env: {} })),
    ).toMatch(/\[llm\]\.api_type: .*"anthropic"/);
    expect(
      errorOf(loadConfig({ cwd: await project('[llm]\napi_type = "google"\nmodel = "gemini-2.5-pro"\n'), env: {} })),
    ).toMatch(
      /\[llm\]\.api_key: is required for api_type = "google" \(or set GEMINI_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY\)/,
    );
    expect(
      errorOf(
        loadConfig({
          cwd: await project('[llm]\nmodel = "x"\napi_key = "k"\n'),
          env: { ANTHROPIC_BASE_URL: 'ftp://x' },
        }),
      ),
    ).toMatch(/ANTHROPIC_BASE_URL: must be an http/);
  });
});

describe('provider:model', () => {
  it('splits off a provider only where the prefix names one', () => {
    expect(splitModel('anthropic:claude-sonnet-4-5')).toEqual({ apiType: 'anthropic', model: 'claude-sonnet-4-5' });
    expect(splitModel('llama3:8b')).toEqual({ model: 'llama3:8b' });
    expect(splitModel('ollama:llama3:8b')).toEqual({ apiType: 'ollama', model: 'llama3:8b' });
    expect(splitModel('aws:us.anthropic.claude-3-7-sonnet-20250219-v1:0')).toEqual({
      apiType: 'aws',
      model: 'us.anthropic.claude-3-7-sonnet-20250219-v1:0',
    });
    expect(splitModel('gpt-4o')).toEqual({ model: 'gpt-4o' });
  });
});
