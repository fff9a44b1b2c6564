import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import {
  createLlmFromConfig,
  describeConfigError,
  llmSettingsFor,
  loadConfig,
  openAiOptionsFrom,
} from '../src/manus/config.js';
import { run } from '../src/shell/run.js';
import { startOpenAiServer } from '../src/testing/server.js';
import { tempWorkspace } from './toolHelpers.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function project(toml?: string) {
  const dir = await tempWorkspace();
  made.push(dir);
  if (toml !== undefined) {
    await mkdir(join(dir, 'config'));
    await writeFile(join(dir, 'config', 'config.toml'), toml);
  }
  return dir;
}

const errorOf = (result: ReturnType<typeof loadConfig>) =>
  result.isOk() ? 'no error' : describeConfigError(result.error);
const configOf = (result: ReturnType<typeof loadConfig>) => {
  if (!result.isOk()) throw new Error(describeConfigError(result.error));
  return result.value;
};

describe('loadConfig', () => {
  it('reads an OpenManus config.toml, merging [llm.<name>] over [llm] by lowercased name', async () => {
    const cwd = await project(`
[llm]
model = "claude-3-7-sonnet"
base_url = "https://api.example.com/v1"
api_key = "sk-file"
max_tokens = 8192
temperature = 0.0

[llm.vision]
model = "gpt-4o"
vision = true

[llm.Manus]
max_input_tokens = 32000

[browser]
headless = false

[daytona]
daytona_api_key = ""
`);
    const config = configOf(loadConfig({ cwd, env: {} }));
    expect(config.llm).toMatchObject({ model: 'claude-3-7-sonnet', max_tokens: 8192, temperature: 0 });
    expect(llmSettingsFor(config, 'vision')).toMatchObject({
      model: 'gpt-4o',
      vision: true,
      api_key: 'sk-file',
      max_tokens: 8192,
    });
    expect(llmSettingsFor(config, 'Manus')).toMatchObject({ model: 'claude-3-7-sonnet', max_input_tokens: 32000 });
    expect(llmSettingsFor(config, 'unknown').model).toBe('claude-3-7-sonnet');
    expect(config.browser).toEqual({ headless: false });
    expect(config.sections).toHaveProperty('daytona');
    expect(config.sections).not.toHaveProperty('browser');
  });

  it('lets the environment override the file, and stand alone without one', async () => {
    const cwd = await project('[llm]\nmodel = "a"\napi_key = "sk-file"\n');
    const env = { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENMANUS_MODEL: 'b' };
    expect(configOf(loadConfig({ cwd, env })).llm).toMatchObject({
      api_key: 'sk-env',
      base_url: 'http://127.0.0.1:9/v1',
      model: 'b',
    });
    const bare = await project();
    expect(configOf(loadConfig({ cwd: bare, env: { OPENAI_API_KEY: 'sk-env' } })).llm).toMatchObject({
      model: 'gpt-4o-mini',
      api_key: 'sk-env',
    });
  });

  it('never falls back to the example file: no config and no environment is a clear error', async () => {
    const cwd = await project();
    await mkdir(join(cwd, 'config'));
    await writeFile(join(cwd, 'config', 'config.example.toml'), '[llm]\nmodel = "x"\napi_key = "k"\n');
    expect(errorOf(loadConfig({ cwd, env: {} }))).toMatch(
      /^no LLM is configured: copy config\/config.example.toml to config\/config.toml/,
    );
    expect(errorOf(loadConfig({ cwd, env: {}, path: 'missing.toml' }))).toBe(
      `${join(cwd, 'missing.toml')}: the config file does not exist`,
    );
  });

  it("a config's error is a value with a stable code: read with match, or a fallback with unwrapOr", async () => {
    const cwd = await project();
    const loaded = loadConfig({ cwd, env: {}, path: 'missing.toml' });
    expect(
      loaded.match(
        () => 'loaded',
        (error) => error.code,
      ),
    ).toBe('CONFIG_INVALID');
    expect(loaded.map((config) => config.llm.model).unwrapOr('fallback')).toBe('fallback');
  });

  it('names the file, the key and what was expected', async () => {
    const cases: [string, RegExp][] = [
      ['[llm\nmodel = "x"', /config\.toml: not valid TOML: /],
      [
        '[llm]\nmodel = "x"\napi_key = "k"\nmax_tokens = "lots"',
        /config\.toml: \[llm\]\.max_tokens: Invalid input: expected number, received string$/,
      ],
      [
        '[llm]\nmodel = "x"\napi_key = "k"\ntemprature = 0.5',
        /config\.toml: \[llm\]: unknown key `temprature`; did you mean `temperature`\?$/,
      ],
      ['[llm]\napi_key = "k"', /config\.toml: \[llm\]\.model: is required/],
      ['[llm]\nmodel = "x"', /config\.toml: \[llm\]\.api_key: is required \(or set OPENAI_API_KEY\)/],
      [
        '[llm]\nmodel = "x"\napi_key = "k"\n[llm.vision]\ntemperature = 9',
        /config\.toml: \[llm\.vision\]\.temperature: Too big/,
      ],
      ['[llm]\nmodel = "x"\napi_key = "k"\napi_type = "azure"', /\[llm\]: api_type = "azure" needs base_url/],
      ['llm = 3', /config\.toml: \[llm\]: expected a table/],
    ];
    for (const [toml, expected] of cases) {
      expect(errorOf(loadConfig({ cwd: await project(toml), env: {} }))).toMatch(expected);
    }
  });

  it('names a misspelt key or section and the known one it is nearest to, before what it leaves missing', async () => {
    const cases: [string, string][] = [
      ['[llm]\nmodle = "x"\napi_key = "k"', '[llm]: unknown key `modle`; did you mean `model`?'],
      [
        '[llm]\nmodel = "x"\napi_key = "k"\n[llm.manus]\nbase-url = "http://h"',
        '[llm.manus]: unknown key `base-url`; did you mean `base_url`?',
      ],
      [
        '[llm]\nmodel = "x"\napi_key = "k"\n[agent]\nmax_step = 3',
        '[agent]: unknown key `max_step`; did you mean `max_steps`?',
      ],
      [
        '[llm]\nmodel = "x"\napi_key = "k"\n[browser.proxy]\nserver = "http://p"\nusername = "u"\npasword = "p"',
        '[browser].proxy: unknown key `pasword`; did you mean `password`?',
      ],
      ['[llm]\nmodel = "x"\napi_key = "k"\n[agent]\ncolour = "blue"', '[agent]: unknown key `colour`'],
      [
        '[llm]\nmodel = "x"\napi_key = "k"\n[browserr]\nheadless = true',
        '[browserr]: unknown section; did you mean [browser]?',
      ],
      [
        '[llm]\nmodel = "x"\napi_key = "k"\n[serach]\nengine = "bing"',
        '[serach]: unknown section; did you mean [search]?',
      ],
      ['[LLM]\nmodel = "x"\napi_key = "k"', '[LLM]: unknown section; did you mean [llm]?'],
    ];
    for (const [toml, expected] of cases) {
      const dir = await project(toml);
      expect(errorOf(loadConfig({ cwd: dir, env: { OPENAI_API_KEY: 'k' } }))).toBe(
        `${join(dir, 'config', 'config.toml')}: ${expected}`,
      );
    }
  });

  it('keeps a section nothing reads, with a warning, and OpenManus sections other packages read without one', async () => {
    const toml =
      '[llm]\nmodel = "x"\napi_key = "k"\n[mcp]\nserver_reference = "app.mcp.server"\n[runflow]\nuse_data_analysis_agent = true\n' +
      '[sandbox]\nuse_sandbox = false\n[daytona]\ndaytona_api_key = "d"\n[telemetry]\nenabled = false\n';
    const config = configOf(loadConfig({ cwd: await project(toml), env: {} }));
    expect(config.warnings).toEqual([
      '[telemetry] is not a section OpenManus reads; it is kept as it is (config.sections)',
    ]);
    expect(Object.keys(config.sections)).toEqual(['mcp', 'runflow', 'sandbox', 'daytona', 'telemetry']);
    expect(configOf(loadConfig({ cwd: await project('[llm]\nmodel = "x"\napi_key = "k"'), env: {} })).warnings).toEqual(
      [],
    );
  });

  it('reads the [agent] section: step limit, workspace and python sandbox', async () => {
    const cwd = await project(
      '[llm]\nmodel = "x"\napi_key = "k"\n[agent]\nmax_steps = 7\nworkspace = "out"\nsandbox = "bwrap"\n',
    );
    expect(configOf(loadConfig({ cwd, env: {} })).agent).toEqual({
      maxSteps: 7,
      workspace: 'out',
      sandbox: 'bwrap',
    });
    const bad = await project('[llm]\nmodel = "x"\napi_key = "k"\n[agent]\nsandbox = "docker"\n');
    expect(errorOf(loadConfig({ cwd: bad, env: {} }))).toMatch(
      /\[agent\]\.sandbox: Invalid option: expected one of "auto"\|"none"\|"bwrap"$/,
    );
  });

  it('reads [search] as OpenManus writes it (engine names in any case), and is empty without one', async () => {
    const cwd = await project(`${'[llm]\nmodel = "x"\napi_key = "k"\n'}
[search]
engine = "Google"
fallback_engines = ["DuckDuckGo", "Baidu", "Bing", "SearXNG"]
retry_delay = 60
max_retries = 3
lang = "en"
country = "us"
searxng_url = "https://searx.example.org"
`);
    const config = configOf(loadConfig({ cwd, env: {} }));
    expect(config.search).toEqual({
      engine: 'google',
      fallback_engines: ['duckduckgo', 'baidu', 'bing', 'searxng'],
      retry_delay: 60,
      max_retries: 3,
      lang: 'en',
      country: 'us',
      searxng_url: 'https://searx.example.org',
    });
    expect(config.sections).not.toHaveProperty('search');
    expect(configOf(loadConfig({ cwd: await project('[llm]\nmodel = "x"\napi_key = "k"\n'), env: {} })).search).toEqual(
      {},
    );
  });

  it('names the [search] key at fault', async () => {
    const valid = '[llm]\nmodel = "x"\napi_key = "k"\n[search]\n';
    const cases: [string, RegExp][] = [
      [
        'engine = "Yahoo"',
        /config\.toml: \[search\]\.engine: expected one of google, bing, duckduckgo, baidu, searxng, brave \(any case\)$/,
      ],
      ['fallback_engines = ["Bing", "Altavista"]', /\[search\]\.fallback_engines\.1: expected one of google/],
      ['retry_delay = -1', /\[search\]\.retry_delay: Too small/],
      ['max_retries = 2.5', /\[search\]\.max_retries: Invalid input: expected int/],
      ['lang = "english please"', /\[search\]\.lang: expected a language code such as "en"/],
      ['country = "usa"', /\[search\]\.country: expected a two-letter country code/],
      ['engin = "google"', /config\.toml: \[search\]: unknown key `engin`; did you mean `engine`\?$/],
      [
        'engine = "searxng"',
        /config\.toml: \[search\]\.searxng_url: is required when \[search\] names the searxng engine$/,
      ],
      [
        'fallback_engines = ["brave"]',
        /\[search\]\.brave_api_key: is required when \[search\] names the brave engine$/,
      ],
      [
        'engine = "searxng"\nsearxng_url = "file:///etc/passwd"',
        /\[search\]\.searxng_url: must be an http:\/\/ or https:\/\/ URL$/,
      ],
    ];
    for (const [line, expected] of cases) {
      expect(errorOf(loadConfig({ cwd: await project(`${valid}${line}\n`), env: {} }))).toMatch(expected);
    }
  });

  it('reads [browser] with OpenManus keys, and is empty without one', async () => {
    const cwd = await project(`${'[llm]\nmodel = "x"\napi_key = "k"\n'}
[browser]
headless = true
disable_security = false
extra_chromium_args = ["--lang=en-US"]
chrome_instance_path = "/opt/chrome/chrome"
cdp_url = "http://127.0.0.1:9222"
max_content_length = 5000
allow_hosts = ["127.0.0.1:8080", "intranet.example"]

[browser.proxy]
server = "http://proxy.example:3128"
username = "me"
password = "secret"
`);
    expect(configOf(loadConfig({ cwd, env: {} })).browser).toEqual({
      headless: true,
      disable_security: false,
      extra_chromium_args: ['--lang=en-US'],
      chrome_instance_path: '/opt/chrome/chrome',
      cdp_url: 'http://127.0.0.1:9222',
      max_content_length: 5000,
      allow_hosts: ['127.0.0.1:8080', 'intranet.example'],
      proxy: { server: 'http://proxy.example:3128', username: 'me', password: 'secret' },
    });
    expect(
      configOf(loadConfig({ cwd: await project('[llm]\nmodel = "x"\napi_key = "k"\n'), env: {} })).browser,
    ).toEqual({});
  });

  it('names the [browser] key at fault', async () => {
    const valid = '[llm]\nmodel = "x"\napi_key = "k"\n[browser]\n';
    const cases: [string, RegExp][] = [
      ['headless = "yes"', /config\.toml: \[browser\]\.headless: Invalid input: expected boolean, received string$/],
      ['extra_chromium_args = "--lang=en"', /\[browser\]\.extra_chromium_args: Invalid input: expected array/],
      ['wss_url = "http://127.0.0.1:3000"', /\[browser\]\.wss_url: must be a ws:\/\/ or wss:\/\/ URL$/],
      ['cdp_url = "file:///tmp/cdp"', /\[browser\]\.cdp_url: must be an http\(s\):\/\/ or ws\(s\):\/\/ URL$/],
      [
        'wss_url = "ws://127.0.0.1:3000"\ncdp_url = "http://127.0.0.1:9222"',
        /config\.toml: \[browser\]: set wss_url or cdp_url, not both/,
      ],
      ['max_content_length = 0', /\[browser\]\.max_content_length: Too small/],
      ['headles = true', /config\.toml: \[browser\]: unknown key `headles`; did you mean `headless`\?$/],
      ['[browser.proxy]\nusername = "me"', /\[browser\]\.proxy\.server: Invalid input: expected string/],
      ['[browser.proxy]\nserver = ""', /\[browser\]\.proxy\.server: is required in \[browser\.proxy\]/],
      ['allow_hosts = "127.0.0.1:8080"', /\[browser\]\.allow_hosts: Invalid input: expected array/],
      ['allow_hosts = ["http://127.0.0.1:8080/"]', /\[browser\]\.allow_hosts\.0: expected a host or host:port/],
      ['allow_hosts = ["a b"]', /\[browser\]\.allow_hosts\.0: expected a host or host:port/],
    ];
    for (const [lines, expected] of cases) {
      expect(errorOf(loadConfig({ cwd: await project(`${valid}${lines}\n`), env: {} }))).toMatch(expected);
    }
  });

  it('accepts Ollama without a key', async () => {
    const cwd = await project(
      '[llm]\napi_type = "ollama"\nmodel = "qwen2.5"\nbase_url = "http://127.0.0.1:11434/v1"\n',
    );
    expect(loadConfig({ cwd, env: {} }).isOk()).toBe(true);
  });

  it('the example config file is valid once a key is given', () => {
    const root = join(import.meta.dirname, '..', '..', '..');
    const result = loadConfig({ cwd: root, path: 'config/config.example.toml', env: {} });
    expect(configOf(result).llm).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 4096 });
  });

  it('builds a working LLM port from a profile', async () => {
    const server = await startOpenAiServer({ script: [{ content: 'configured' }] });
    try {
      const cwd = await project(
        `[llm]\nmodel = "base"\napi_key = "sk-x"\nbase_url = "${server.baseURL}"\nmax_tokens = 55\n[llm.writer]\nmodel = "o4-mini"\n`,
      );
      const config = configOf(loadConfig({ cwd, env: {} }));
      const result = await run(createAgent({ name: 'writer' }), 'hi', { llm: createLlmFromConfig(config, 'writer') });
      expect(result.answer).toBe('configured');
      expect(server.requests[0]).toMatchObject({ model: 'o4-mini', max_completion_tokens: 55 });
    } finally {
      await server.close();
    }
  });
});

describe('loadConfig refuses what would misbehave later', () => {
  const valid = '[llm]\nmodel = "x"\napi_key = "k"\n';

  it('bounds numbers: a timeout past what a timer holds, and other out-of-range values', async () => {
    const cases: [string, RegExp][] = [
      // 3,000,000 s overflows Node's timer (2^31-1 ms): every request would time out at once.
      ['timeout = 3000000', /config\.toml: \[llm\]\.timeout: Too big: expected number to be <=86400$/],
      ['timeout = 0', /\[llm\]\.timeout: Too small: expected number to be >0$/],
      ['timeout = inf', /\[llm\]\.timeout: Invalid input: expected number, received Infinity$/],
      ['timeout = nan', /\[llm\]\.timeout: Invalid input: expected number, received NaN$/],
      ['idle_timeout = -1', /\[llm\]\.idle_timeout: Too small/],
      ['max_tokens = 0', /\[llm\]\.max_tokens: Too small/],
      ['max_tokens = 1.5', /\[llm\]\.max_tokens: Invalid input: expected int/],
      ['max_tokens = 100000000000', /\[llm\]\.max_tokens: Too big/],
      ['temperature = -0.5', /\[llm\]\.temperature: Too small/],
      ['max_retries = 1000', /\[llm\]\.max_retries: Too big: expected number to be <=10$/],
      ['max_retries = -1', /\[llm\]\.max_retries: Too small/],
    ];
    for (const [line, expected] of cases) {
      expect(errorOf(loadConfig({ cwd: await project(`${valid}${line}\n`), env: {} }))).toMatch(expected);
    }
    const ok = configOf(loadConfig({ cwd: await project(`${valid}timeout = 86400\nidle_timeout = 0.5\n`), env: {} }));
    expect(openAiOptionsFrom(ok.llm)).toMatchObject({ timeoutMs: 86_400_000, idleTimeoutMs: 500 });
  });

  it('and a port built by hand with a timer-overflowing timeout is refused, not broken', () => {
    expect(() => createOpenAiLlm({ model: 'm', timeoutMs: 3_000_000_000 })).toThrow(
      'timeoutMs must be more than 0 and at most 2147483647 ms, got 3000000000',
    );
    expect(() => createOpenAiLlm({ model: 'm', idleTimeoutMs: 0 })).toThrow(RangeError);
    expect(() => createOpenAiLlm({ model: 'm', maxRetries: -1 })).toThrow(RangeError);
  });

  it('refuses base URLs that are not http(s)', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/v1', 'javascript:alert(1)', 'not a url']) {
      expect(errorOf(loadConfig({ cwd: await project(`${valid}base_url = "${url}"\n`), env: {} }))).toMatch(
        /config\.toml: \[llm\]\.base_url: must be an http:\/\/ or https:\/\/ URL$/,
      );
    }
    expect(
      errorOf(loadConfig({ cwd: await project(`${valid}[llm.local]\nbase_url = "file:///tmp/x"\n`), env: {} })),
    ).toMatch(/\[llm\.local\]\.base_url: must be an http/);
    const ok = await project(`${valid}base_url = "https://api.example.com/v1"\n`);
    expect(configOf(loadConfig({ cwd: ok, env: {} })).llm.base_url).toBe('https://api.example.com/v1');
  });

  it('blames a bad environment variable on the variable, not on a key of the file', async () => {
    const cwd = await project(`${valid}[llm.vision]\nmodel = "v"\n`);
    expect(errorOf(loadConfig({ cwd, env: { OPENAI_BASE_URL: 'file:///etc/passwd' } }))).toBe(
      'OPENAI_BASE_URL: must be an http:// or https:// URL',
    );
    expect(errorOf(loadConfig({ cwd: await project(), env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'nope' } }))).toBe(
      'OPENAI_BASE_URL: must be an http:// or https:// URL',
    );
  });

  it('reports [llm.Manus] and [llm.manus] as a collision instead of keeping one silently', async () => {
    const cwd = await project(`${valid}[llm.Manus]\nmodel = "a"\n[llm.manus]\nmodel = "b"\n`);
    expect(errorOf(loadConfig({ cwd, env: {} }))).toMatch(
      /config\.toml: \[llm\]: \[llm\.Manus\] and \[llm\.manus\] name the same profile \(profile names ignore case\)/,
    );
  });
});

describe('[prices]', () => {
  const valid = '[llm]\nmodel = "my-model"\napi_key = "k"\n';

  it('prices a model per million tokens, over the built-in table, and the port reports the cost', async () => {
    const server = await startOpenAiServer({
      script: [{ content: 'priced', usage: { inputTokens: 2_000, outputTokens: 100, cachedInputTokens: 1_000 } }],
    });
    try {
      const toml =
        `[llm]\nmodel = "my-model"\napi_key = "k"\nbase_url = "${server.baseURL}"\n` +
        '[prices."my-model"]\ninput = 2\ncached_input = 0.5\noutput = 8\n[prices."gpt-4o"]\ninput = 1\noutput = 1\n';
      const config = configOf(loadConfig({ cwd: await project(toml), env: {} }));
      expect(config.prices).toEqual({
        'my-model': { input: 2, cachedInput: 0.5, output: 8 },
        'gpt-4o': { input: 1, output: 1 },
      });
      const result = await run(createAgent({ name: 'a' }), 'hi', { llm: createLlmFromConfig(config) });
      // 1,000 fresh × 2 + 1,000 cached × 0.5 + 100 × 8, per million.
      expect(result.usage).toEqual({
        inputTokens: 2_000,
        outputTokens: 100,
        llmCalls: 1,
        cachedInputTokens: 1_000,
        costUsd: 0.0033,
      });
    } finally {
      await server.close();
    }
  });

  it('gives a profile the price of its own model, a dated snapshot included', async () => {
    const toml = `${valid}[llm.fast]\nmodel = "my-model-2025-06-01"\n[prices."my-model"]\ninput = 1\noutput = 3\n`;
    const config = configOf(loadConfig({ cwd: await project(toml), env: {} }));
    expect(openAiOptionsFrom(llmSettingsFor(config, 'fast'), config.prices).price).toEqual({ input: 1, output: 3 });
    expect(openAiOptionsFrom(llmSettingsFor(config, 'fast')).price).toBeUndefined();
    expect(configOf(loadConfig({ cwd: await project(valid), env: {} })).prices).toEqual({});
  });

  it('names the model and the key at fault, and what a price is', async () => {
    const usd = 'expected USD per million tokens, a number of at least 0 (e.g. 2.5)';
    const cases: [string, string][] = [
      [`${valid}[prices."my-model"]\ninput = "2.5"\noutput = 10`, `[prices."my-model"].input: ${usd}`],
      [`${valid}[prices."my-model"]\ninput = -1\noutput = 10`, `[prices."my-model"].input: ${usd}`],
      [`${valid}[prices."my-model"]\ninput = 2.5`, '[prices."my-model"].output: is required (USD per million tokens)'],
      [
        `${valid}[prices."my-model"]\ninput = 2.5\ncached_imput = 1\noutput = 10`,
        '[prices."my-model"]: unknown key `cached_imput`; did you mean `cached_input`?',
      ],
      [`${valid}[prices]\n"my-model" = 2.5`, '[prices."my-model"]: expected a table: input, cached_input, output, ...'],
      // Before any table header: a top-level key (after [llm] it would be one of [llm]'s).
      [`prices = 3\n${valid}`, '[prices]: expected a table of models, e.g. [prices."gpt-4o"]'],
      [`${valid}[price."my-model"]\ninput = 2.5\noutput = 10`, '[price]: unknown section; did you mean [prices]?'],
      [
        `${valid}[llm.price]\ninput = 2.5\noutput = 10`,
        '[llm.price]: prices are given per model, in a [prices."<model name>"] table (input, cached_input, output, ...)',
      ],
    ];
    for (const [toml, expected] of cases) {
      const dir = await project(toml);
      expect(errorOf(loadConfig({ cwd: dir, env: {} }))).toBe(`${join(dir, 'config', 'config.toml')}: ${expected}`);
    }
  });

  it('prompt_cache_key = false keeps the cache key out of requests', async () => {
    const config = configOf(loadConfig({ cwd: await project(`${valid}prompt_cache_key = false\n`), env: {} }));
    expect(openAiOptionsFrom(config.llm).promptCacheKey).toBe(false);
    expect(openAiOptionsFrom(configOf(loadConfig({ cwd: await project(valid), env: {} })).llm)).not.toHaveProperty(
      'promptCacheKey',
    );
  });
});
