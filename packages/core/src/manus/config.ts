import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type * as Toml from 'smol-toml';
import type * as Zod from 'zod';
import { lazyModule, loadZod } from '../lazyModule.js';
import { createAnthropicLlm } from '../llm/anthropic.js';
import { createBedrockLlm } from '../llm/bedrock.js';
import { createGoogleLlm } from '../llm/google.js';
import type { LlmPort } from '../llm/llm.js';
import { type ApiType, createOpenAiLlm, type OpenAiLlmOptions } from '../llm/openai.js';
import { type ModelPrice, type PriceTable, priceIn } from '../llm/prices.js';
import { err, ok, type Result } from '../result.js';
import { allowedHostOf } from './allowedHost.js';
import { nearestName } from './nearestName.js';
import { API_TYPES, PROVIDER_ENV, type ProviderWire, splitModel, wireOf } from './providerEnv.js';

/** Longest request timeout, in seconds: a day (Node's timers overflow past about 24.8 days and fire at once). */
const MAX_TIMEOUT_SECONDS = 86_400;

/** The web search engines `[search]` can name (web_search in @openmanus/tools implements them). */
const SEARCH_ENGINES = ['google', 'bing', 'duckduckgo', 'baidu', 'searxng', 'brave'] as const;
export type SearchEngineName = (typeof SEARCH_ENGINES)[number];

/** The config's schemas, built on the first `loadConfig` (importing the package does not load zod). */
function buildSchemas({ z }: typeof import('zod')) {
  const seconds = z.number().positive().max(MAX_TIMEOUT_SECONDS);
  /** One `[llm]` table (or `[llm.<name>]` merged over it), in config.toml's own key names. */
  const llmSettings = z
    .object({
      model: z.string().min(1),
      // Only http(s): a file:// or other scheme is never a model endpoint.
      base_url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
      api_key: z.string().optional(),
      api_type: z.enum([...API_TYPES, '']).optional(),
      // Ours, for api_type = "aws": the AWS region (else read from base_url's host, or the AWS configuration).
      region: z.string().min(1).optional(),
      api_version: z.string().optional(),
      max_tokens: z.number().int().positive().max(10_000_000).optional(),
      max_input_tokens: z.number().int().positive().max(100_000_000).optional(),
      temperature: z.number().min(0).max(2).optional(),
      // Capability flags (ours): what the model can do, instead of a hard-coded model list.
      vision: z.boolean().optional(),
      reasoning: z.boolean().optional(),
      tool_mode: z.enum(['native', 'prompt']).optional(),
      timeout: seconds.optional(),
      idle_timeout: seconds.optional(),
      max_retries: z.number().int().min(0).max(10).optional(),
      // Ours: send a run's cache key as prompt_cache_key (off for servers that refuse unknown fields).
      prompt_cache_key: z.boolean().optional(),
    })
    .strict();
  // One `[prices."<model>"]` table: USD per million tokens.
  const usd = (required: boolean) =>
    z
      .number({
        error: (issue) =>
          issue.input === undefined && required
            ? 'is required (USD per million tokens)'
            : 'expected USD per million tokens, a number of at least 0 (e.g. 2.5)',
      })
      .min(0, { error: 'expected USD per million tokens, a number of at least 0 (e.g. 2.5)' });
  const priceTable = z
    .object({
      input: usd(true),
      cached_input: usd(false).optional(),
      cache_write: usd(false).optional(),
      output: usd(true),
      max_input_tokens: z.number().int().positive().optional(),
    })
    .strict();
  const agentSection = z
    .object({
      max_steps: z.number().int().positive().optional(),
      workspace: z.string().optional(),
      sandbox: z.enum(['auto', 'none', 'bwrap']).optional(),
    })
    .strict();
  // OpenManus writes engine names capitalised ("Google", "DuckDuckGo"): any case is the same engine.
  const engineName = z
    .string()
    .transform((name) => name.toLowerCase())
    .pipe(z.enum(SEARCH_ENGINES, { error: `expected one of ${SEARCH_ENGINES.join(', ')} (any case)` }));
  const searchSection = z
    .object({
      engine: engineName.optional(),
      fallback_engines: z.array(engineName).optional(),
      retry_delay: z.number().min(0).max(3600).optional(),
      max_retries: z.number().int().min(0).max(10).optional(),
      lang: z
        .string()
        .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, { error: 'expected a language code such as "en" or "zh-CN"' })
        .optional(),
      country: z
        .string()
        .regex(/^[A-Za-z]{2}$/, { error: 'expected a two-letter country code such as "us"' })
        .optional(),
      searxng_url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
      brave_api_key: z.string().min(1).optional(),
    })
    .strict();
  // OpenManus's [browser] keys (@openmanus/browser reads them).
  const browserSection = z
    .object({
      headless: z.boolean().optional(),
      disable_security: z.boolean().optional(),
      extra_chromium_args: z.array(z.string()).optional(),
      chrome_instance_path: z.string().min(1).optional(),
      wss_url: z.url({ protocol: /^wss?$/, error: 'must be a ws:// or wss:// URL' }).optional(),
      cdp_url: z.url({ protocol: /^(https?|wss?)$/, error: 'must be an http(s):// or ws(s):// URL' }).optional(),
      proxy: z
        .object({
          server: z.string().min(1, { error: 'is required in [browser.proxy] (e.g. "http://proxy.example:3128")' }),
          username: z.string().optional(),
          password: z.string().optional(),
        })
        .strict()
        .optional(),
      max_content_length: z.number().int().positive().max(10_000_000).optional(),
      // Ours: hosts the browser may reach beside public ones (its allowHosts), e.g. a site on this machine.
      allow_hosts: z
        .array(
          z.string().refine((entry) => allowedHostOf(entry) !== undefined, {
            error: 'expected a host or host:port (e.g. "intranet.example:8080", "127.0.0.1:3000")',
          }),
        )
        .optional(),
    })
    .strict()
    .refine((browser) => !(browser.wss_url && browser.cdp_url), {
      error: 'set wss_url or cdp_url, not both: each names the browser to connect to',
    });
  const envSettings = llmSettings.pick({ api_key: true, base_url: true, model: true }).partial();
  return { llmSettings, priceTable, agentSection, searchSection, browserSection, envSettings };
}

let built: ReturnType<typeof buildSchemas> | undefined;
const schemas = () => {
  built ??= buildSchemas(loadZod());
  return built;
};
const loadToml = lazyModule<typeof Toml>('smol-toml');

export type LlmSettings = Zod.infer<ReturnType<typeof buildSchemas>['llmSettings']>;
/** `[search]` as written (engine names lowercased); web_search fills in OpenManus's defaults. */
export type SearchSettings = Zod.output<ReturnType<typeof buildSchemas>['searchSection']>;
/** `[browser]` as written; the browser tool fills in its defaults (headless, web security on). */
export type BrowserSettings = Zod.output<ReturnType<typeof buildSchemas>['browserSection']>;

/**
 * The sections of an OpenManus config.toml: the five checked here key by key, and those other
 * packages read ([sandbox], [daytona] and [runflow]; OpenManus's [mcp]). Any other section is
 * kept as it is, with a warning, unless its name is a near miss of one of these (an error).
 */
const KNOWN_SECTIONS = ['llm', 'prices', 'agent', 'search', 'browser', 'sandbox', 'mcp', 'runflow', 'daytona'] as const;

/** The variable that overrides every table's model: a name, or `provider:model` (`anthropic:claude-sonnet-4-5`). */
const MODEL_VARIABLE = 'OPENMANUS_MODEL';

/** What the environment sets for one wire: the first variable set of each key (see `PROVIDER_ENV`), and which it was. */
function envFor(
  wire: ProviderWire,
  env: Readonly<Record<string, string | undefined>>,
): { values: Record<string, string>; variables: Record<string, string> } {
  const values: Record<string, string> = {};
  const variables: Record<string, string> = {};
  for (const [key, names] of Object.entries(PROVIDER_ENV[wire])) {
    const variable = names.find((name) => env[name]);
    if (variable) {
      values[key] = env[variable] as string;
      variables[key] = variable;
    }
  }
  return { values, variables };
}

/**
 * A table with the environment over it: OPENMANUS_MODEL's model (its provider, if it names one that
 * differs from the table's, replaces the table's and drops the key and endpoint that were the other
 * provider's), then the key and endpoint variables of the table's provider.
 */
function withEnv(
  table: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, unknown> {
  let merged = table;
  const named = env[MODEL_VARIABLE];
  if (named) {
    const { apiType, model } = splitModel(named);
    const switched = apiType !== undefined && wireOf(apiType) !== wireOf(merged.api_type as string | undefined);
    const { api_key: _key, base_url: _url, api_version: _version, region: _region, ...rest } = merged;
    merged = { ...(switched ? rest : merged), model, ...(apiType ? { api_type: apiType } : {}) };
  }
  return { ...merged, ...envFor(wireOf(merged.api_type as string | undefined), env).values };
}

export interface OpenManusConfig {
  /** The file it came from, if any (environment-only configs have none). */
  readonly file?: string;
  readonly llm: LlmSettings;
  /** `[llm.<name>]` tables, already merged over `[llm]` and validated. */
  readonly profiles: Readonly<Record<string, LlmSettings>>;
  /** `[prices."<model>"]` tables: what the models cost, over the built-in table (empty when the file has none). */
  readonly prices: PriceTable;
  readonly agent: {
    readonly maxSteps?: number;
    readonly workspace?: string;
    readonly sandbox?: 'auto' | 'none' | 'bwrap';
  };
  /** `[search]`, validated (empty when the file has none). */
  readonly search: SearchSettings;
  /** `[browser]`, validated (empty when the file has none). */
  readonly browser: BrowserSettings;
  /** Every other section, untouched (mcp, runflow, ... for the packages that read them). */
  readonly sections: Readonly<Record<string, unknown>>;
  /** What the file has that nothing reads (a section of another tool): kept, and worth a look. */
  readonly warnings: readonly string[];
}

/** Why a config could not be used: the file, the key in it, and what is wrong. */
export interface ConfigError {
  readonly code: 'CONFIG_INVALID';
  readonly file?: string;
  readonly key?: string;
  readonly message: string;
}

export const describeConfigError = (error: ConfigError): string =>
  [error.file, error.key].filter(Boolean).join(': ') + (error.file || error.key ? ': ' : '') + error.message;

export interface LoadConfigOptions {
  /** A config.toml path; default: `$OPENMANUS_CONFIG`, else `config/config.toml` under `cwd` if it exists. */
  readonly path?: string;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Loads an OpenManus-compatible config.toml; `OPENAI_API_KEY`, `OPENAI_BASE_URL` and
 * `OPENMANUS_MODEL` override it, and alone they make a complete config. Never falls back to
 * the example file; sections nobody uses are kept, not validated.
 */
export function loadConfig(options: LoadConfigOptions = {}): Result<OpenManusConfig, ConfigError> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.path ?? (env.OPENMANUS_CONFIG || undefined);
  const file = explicit ? resolve(cwd, explicit) : resolve(cwd, 'config', 'config.toml');

  let raw: Record<string, unknown> = {};
  const hasFile = existsSync(file);
  if (explicit && !hasFile) return err({ code: 'CONFIG_INVALID', file, message: 'the config file does not exist' });
  if (hasFile) {
    try {
      raw = loadToml().parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      return err({
        code: 'CONFIG_INVALID',
        file,
        message: `not valid TOML: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  }
  const where = hasFile ? { file } : {};

  const {
    llm: llmTable,
    prices: pricesTable,
    agent: agentTable,
    search: searchTable,
    browser: browserTable,
    ...sections
  } = raw;
  const warnings: string[] = [];
  for (const name of Object.keys(sections)) {
    if ((KNOWN_SECTIONS as readonly string[]).includes(name)) continue;
    const near = nearestName(name, KNOWN_SECTIONS);
    if (near)
      return err({
        code: 'CONFIG_INVALID',
        ...where,
        key: `[${name}]`,
        message: `unknown section; did you mean [${near}]?`,
      });
    warnings.push(`[${name}] is not a section OpenManus reads; it is kept as it is (config.sections)`);
  }
  if (llmTable !== undefined && (typeof llmTable !== 'object' || llmTable === null || Array.isArray(llmTable))) {
    return err({ code: 'CONFIG_INVALID', ...where, key: '[llm]', message: 'expected a table' });
  }
  const { base, named } = splitProfiles((llmTable ?? {}) as Record<string, unknown>);
  const pricedProfile = Object.keys(named).find((name) => /^prices?$/i.test(name));
  if (pricedProfile) {
    return err({
      code: 'CONFIG_INVALID',
      ...where,
      key: `[llm.${pricedProfile}]`,
      message: 'prices are given per model, in a [prices."<model name>"] table (input, cached_input, output, ...)',
    });
  }
  const collision = sameProfileNames(Object.keys(named));
  if (collision) {
    const [a, b] = collision;
    return err({
      code: 'CONFIG_INVALID',
      ...where,
      key: '[llm]',
      message: `[llm.${a}] and [llm.${b}] name the same profile (profile names ignore case): merge them into one`,
    });
  }
  // Each provider's variables are checked on their own first, so a bad value is blamed on its variable, not on a key of the file.
  for (const wire of Object.keys(PROVIDER_ENV) as ProviderWire[]) {
    const { values, variables } = envFor(wire, env);
    const fromEnv = schemas().envSettings.safeParse(values);
    if (!fromEnv.success) {
      const issue = fromEnv.error.issues[0];
      return err({
        code: 'CONFIG_INVALID',
        key: variables[String(issue?.path[0])] ?? wire,
        message: issue?.message ?? 'invalid',
      });
    }
  }
  const configured =
    env[MODEL_VARIABLE] || Object.values(PROVIDER_ENV.openai).some((names) => names.some((name) => env[name]));
  if (!hasFile && !configured) {
    return err({
      code: 'CONFIG_INVALID',
      message:
        'no LLM is configured: copy config/config.example.toml to config/config.toml and fill in [llm], ' +
        'or set OPENAI_API_KEY (and OPENAI_BASE_URL / OPENMANUS_MODEL for other endpoints)',
    });
  }
  // Only an environment-only config gets a default model; a file must name its model.
  const llm = validate(withEnv(hasFile ? base : { model: 'gpt-4o-mini' }, env), '[llm]', where);
  if (!llm.isOk()) return err(llm.error);

  const profiles: Record<string, LlmSettings> = {};
  for (const [name, table] of Object.entries(named)) {
    const merged = validate(withEnv({ ...base, ...table }, env), `[llm.${name}]`, where);
    if (!merged.isOk()) return err(merged.error);
    profiles[name.toLowerCase()] = merged.value;
  }

  const prices = pricesFrom(pricesTable, where);
  if (!prices.isOk()) return err(prices.error);
  const agent = schemas().agentSection.safeParse(agentTable ?? {});
  if (!agent.success)
    return err({ code: 'CONFIG_INVALID', ...where, ...issueOf(agent.error, '[agent]', schemas().agentSection) });
  const search = schemas().searchSection.safeParse(searchTable ?? {});
  if (!search.success)
    return err({ code: 'CONFIG_INVALID', ...where, ...issueOf(search.error, '[search]', schemas().searchSection) });
  const unusable = unusableEngine(search.data);
  if (unusable) return err({ code: 'CONFIG_INVALID', ...where, ...unusable });
  const browser = schemas().browserSection.safeParse(browserTable ?? {});
  if (!browser.success)
    return err({ code: 'CONFIG_INVALID', ...where, ...issueOf(browser.error, '[browser]', schemas().browserSection) });
  return ok({
    ...where,
    llm: llm.value,
    profiles,
    prices: prices.value,
    agent: {
      ...(agent.data.max_steps !== undefined ? { maxSteps: agent.data.max_steps } : {}),
      ...(agent.data.workspace !== undefined ? { workspace: agent.data.workspace } : {}),
      ...(agent.data.sandbox !== undefined ? { sandbox: agent.data.sandbox } : {}),
    },
    search: search.data,
    browser: browser.data,
    sections,
    warnings,
  });
}

/** `[prices]`: a table per model name, each checked key by key. */
function pricesFrom(table: unknown, where: { file?: string }): Result<PriceTable, ConfigError> {
  if (table === undefined) return ok({});
  if (typeof table !== 'object' || table === null || Array.isArray(table)) {
    return err({
      code: 'CONFIG_INVALID',
      ...where,
      key: '[prices]',
      message: 'expected a table of models, e.g. [prices."gpt-4o"]',
    });
  }
  const { priceTable } = schemas();
  const prices: Record<string, ModelPrice> = {};
  for (const [model, value] of Object.entries(table)) {
    const name = `[prices.${JSON.stringify(model)}]`;
    const parsed = priceTable.safeParse(value);
    if (!parsed.success) {
      const notTable = typeof value !== 'object' || value === null || Array.isArray(value);
      if (notTable)
        return err({
          code: 'CONFIG_INVALID',
          ...where,
          key: name,
          message: 'expected a table: input, cached_input, output, ...',
        });
      return err({ code: 'CONFIG_INVALID', ...where, ...issueOf(parsed.error, name, priceTable) });
    }
    const { input, cached_input, cache_write, output, max_input_tokens } = parsed.data;
    prices[model] = {
      input,
      ...(cached_input !== undefined ? { cachedInput: cached_input } : {}),
      ...(cache_write !== undefined ? { cacheWrite: cache_write } : {}),
      output,
      ...(max_input_tokens !== undefined ? { maxInputTokens: max_input_tokens } : {}),
    };
  }
  return ok(prices);
}

/** An engine `[search]` names that its keys leave without an endpoint or a key. */
function unusableEngine(search: SearchSettings): { key: string; message: string } | undefined {
  const named = [search.engine, ...(search.fallback_engines ?? [])];
  if (named.includes('searxng') && !search.searxng_url) {
    return { key: '[search].searxng_url', message: 'is required when [search] names the searxng engine' };
  }
  if (named.includes('brave') && !search.brave_api_key) {
    return { key: '[search].brave_api_key', message: 'is required when [search] names the brave engine' };
  }
  return undefined;
}

/** Two profile names that differ only in case (`Manus` and `manus`): they would silently replace each other. */
function sameProfileNames(names: readonly string[]): [string, string] | undefined {
  const seen = new Map<string, string>();
  for (const name of names) {
    const earlier = seen.get(name.toLowerCase());
    if (earlier !== undefined) return [earlier, name];
    seen.set(name.toLowerCase(), name);
  }
  return undefined;
}

function splitProfiles(table: Record<string, unknown>) {
  const base: Record<string, unknown> = {};
  const named: Record<string, Record<string, unknown>> = {};
  for (const [key, value] of Object.entries(table)) {
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      named[key] = value as Record<string, unknown>;
    else base[key] = value;
  }
  return { base, named };
}

function validate(
  value: Record<string, unknown>,
  table: string,
  where: { file?: string },
): Result<LlmSettings, ConfigError> {
  const { llmSettings } = schemas();
  const parsed = llmSettings.safeParse(withBedrockScheme(value));
  // A misspelt key is named first: it explains a key that is missing (`modle` for `model`).
  const misspelt = parsed.error?.issues.some((issue) => issue.code === 'unrecognized_keys');
  if (value.model === undefined && !misspelt) {
    return err({
      code: 'CONFIG_INVALID',
      ...where,
      key: `${table}.model`,
      message: 'is required (the model name to call)',
    });
  }
  if (!parsed.success) return err({ code: 'CONFIG_INVALID', ...where, ...issueOf(parsed.error, table, llmSettings) });
  const settings = parsed.data;
  const wire = wireOf(settings.api_type);
  // Ollama takes any key; Bedrock signs with the AWS credential chain.
  if (!settings.api_key && settings.api_type !== 'ollama' && wire !== 'aws') {
    const variables = PROVIDER_ENV[wire].api_key.join(' or ');
    return err({
      code: 'CONFIG_INVALID',
      ...where,
      key: `${table}.api_key`,
      message:
        wire === 'openai'
          ? `is required (or set ${variables}); only api_type = "ollama" needs none`
          : `is required for api_type = "${settings.api_type}" (or set ${variables})`,
    });
  }
  if (settings.api_type === 'azure' && (!settings.base_url || !settings.api_version)) {
    return err({
      code: 'CONFIG_INVALID',
      ...where,
      key: table,
      message: 'api_type = "azure" needs base_url (the resource endpoint) and api_version',
    });
  }
  return ok(settings);
}

/** OpenManus writes Bedrock's endpoint as a bare host (`bedrock-runtime.us-west-2.amazonaws.com`): it is that host over https. */
function withBedrockScheme(value: Record<string, unknown>): Record<string, unknown> {
  const { api_type: apiType, base_url: url } = value;
  const bareHost = typeof url === 'string' && /^[a-z0-9.-]+(?::\d+)?$/i.test(url);
  return apiType === 'aws' && bareHost ? { ...value, base_url: `https://${url}` } : value;
}

/** The first thing wrong in a table, a misspelt key before anything else, with the known key it is nearest to. */
function issueOf(error: Zod.ZodError, table: string, schema: Zod.ZodType): { key: string; message: string } {
  const issue = error.issues.find((found) => found.code === 'unrecognized_keys') ?? error.issues[0];
  const path = issue?.path.join('.') ?? '';
  const key = path ? `${table}.${path}` : table;
  if (issue?.code === 'unrecognized_keys') {
    const known = keysAt(schema, issue.path);
    const named = issue.keys.map((unknown) => `\`${unknown}\``).join(', ');
    const near = issue.keys.flatMap((unknown) => nearestName(unknown, known) ?? []);
    const hint = near.length > 0 ? `; did you mean ${near.map((name) => `\`${name}\``).join(', ')}?` : '';
    return { key, message: `unknown key${issue.keys.length > 1 ? 's' : ''} ${named}${hint}` };
  }
  return { key, message: issue?.message ?? 'invalid' };
}

/** The keys the object schema at `path` of `schema` knows (through optional wrappers). */
function keysAt(schema: Zod.ZodType, path: readonly PropertyKey[]): string[] {
  const shapeOf = (at: Zod.ZodType | undefined): Record<string, Zod.ZodType> | undefined => {
    const def = at?.def as { type?: string; shape?: Record<string, Zod.ZodType>; innerType?: Zod.ZodType } | undefined;
    return def?.type === 'optional' ? shapeOf(def.innerType) : def?.type === 'object' ? def.shape : undefined;
  };
  let at: Zod.ZodType | undefined = schema;
  for (const key of path) at = shapeOf(at)?.[String(key)];
  return Object.keys(shapeOf(at) ?? {});
}

/** The settings for an agent: `[llm.<profile>]` when it exists (lowercased), else `[llm]`. */
export function llmSettingsFor(config: OpenManusConfig, profile?: string): LlmSettings {
  return (profile && config.profiles[profile.toLowerCase()]) || config.llm;
}

const openAiApiType = (apiType: string | undefined): ApiType | undefined =>
  apiType === 'openai' || apiType === 'azure' || apiType === 'ollama' ? apiType : undefined;

/** What every port takes from a table: the model, its key and endpoint, limits, capabilities and price. */
function commonOptionsFrom(settings: LlmSettings, prices: PriceTable) {
  const { timeout } = settings;
  const price = priceIn(prices, settings.model);
  return {
    model: settings.model,
    ...(settings.api_key ? { apiKey: settings.api_key } : {}),
    ...(settings.base_url ? { baseURL: settings.base_url } : {}),
    ...(settings.max_tokens !== undefined ? { maxTokens: settings.max_tokens } : {}),
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    ...(settings.vision !== undefined ? { vision: settings.vision } : {}),
    ...(settings.tool_mode ? { toolMode: settings.tool_mode } : {}),
    ...(timeout !== undefined ? { timeoutMs: Math.ceil(timeout * 1000) } : {}),
    ...(settings.idle_timeout !== undefined ? { idleTimeoutMs: Math.ceil(settings.idle_timeout * 1000) } : {}),
    ...(settings.max_retries !== undefined ? { maxRetries: settings.max_retries } : {}),
    ...(price ? { price } : {}),
  };
}

/** The OpenAI port's options for a profile's settings; `prices` (a config's) gives its model's price, if it has one. */
export function openAiOptionsFrom(settings: LlmSettings, prices: PriceTable = {}): OpenAiLlmOptions {
  const apiType = openAiApiType(settings.api_type);
  return {
    ...commonOptionsFrom(settings, prices),
    ...(apiType ? { apiType } : {}),
    ...(settings.api_version ? { apiVersion: settings.api_version } : {}),
    ...(settings.reasoning !== undefined ? { reasoning: settings.reasoning } : {}),
    ...(settings.prompt_cache_key !== undefined ? { promptCacheKey: settings.prompt_cache_key } : {}),
  };
}

/** An LLM port for a profile of the config. */
export function createLlmFromConfig(config: OpenManusConfig, profile?: string): LlmPort {
  const settings = llmSettingsFor(config, profile);
  switch (wireOf(settings.api_type)) {
    case 'anthropic':
      return createAnthropicLlm(commonOptionsFrom(settings, config.prices));
    case 'google':
      return createGoogleLlm(commonOptionsFrom(settings, config.prices));
    case 'aws': {
      // OpenManus's api_key for Bedrock is a placeholder: requests are signed with the AWS credential chain.
      const { apiKey: _key, baseURL, ...common } = commonOptionsFrom(settings, config.prices);
      return createBedrockLlm({
        ...common,
        ...(baseURL ? { endpoint: baseURL } : {}),
        ...(settings.region ? { region: settings.region } : {}),
      });
    }
    default:
      return createOpenAiLlm(openAiOptionsFrom(settings, config.prices));
  }
}
