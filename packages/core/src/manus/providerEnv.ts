// Which provider a config table talks to, and the environment variables that configure it: OpenManus's
// OPENAI_API_KEY / OPENAI_BASE_URL for OpenAI's wire, each other provider's own for its port.

/** config.toml's `api_type` values: OpenAI's wire (`openai`, `azure`, `ollama`) and the native ports. */
export const API_TYPES = ['openai', 'azure', 'ollama', 'aws', 'anthropic', 'google'] as const;
export type ConfigApiType = (typeof API_TYPES)[number];

/** The wire a table's `api_type` speaks: the native ports', or OpenAI's (no api_type included). */
export type ProviderWire = 'openai' | 'anthropic' | 'aws' | 'google';

export const wireOf = (apiType: string | undefined): ProviderWire =>
  apiType === 'anthropic' || apiType === 'aws' || apiType === 'google' ? apiType : 'openai';

/** Per wire, the variables that override a table's key and endpoint (the first one set wins). */
export const PROVIDER_ENV: Readonly<
  Record<ProviderWire, { readonly api_key: readonly string[]; readonly base_url: readonly string[] }>
> = {
  openai: { api_key: ['OPENAI_API_KEY'], base_url: ['OPENAI_BASE_URL'] },
  anthropic: { api_key: ['ANTHROPIC_API_KEY'], base_url: ['ANTHROPIC_BASE_URL'] },
  // Bedrock signs requests with the AWS default credential chain (AWS_ACCESS_KEY_ID, profiles, roles).
  aws: { api_key: [], base_url: [] },
  google: { api_key: ['GEMINI_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY'], base_url: [] },
};

/**
 * `anthropic:claude-sonnet-4-5` as its provider and model. A prefix that names no provider is part
 * of the model's name (Ollama's `llama3:8b`, Bedrock's `…-v1:0`): `ollama:llama3:8b` names both.
 */
export function splitModel(name: string): { readonly apiType?: ConfigApiType; readonly model: string } {
  const colon = name.indexOf(':');
  const prefix = name.slice(0, colon);
  if (colon > 0 && (API_TYPES as readonly string[]).includes(prefix)) {
    return { apiType: prefix as ConfigApiType, model: name.slice(colon + 1) };
  }
  return { model: name };
}
