import { resolve } from 'node:path';
import {
  type ConfigError,
  err,
  type LlmPort,
  loadConfig,
  type OpenManusConfig,
  ok,
  type Result,
  recordLlm,
  type SandboxMode,
} from '@openmanus/core';
import { isProviderName, PROVIDER_NAMES, type ProviderName } from './sandboxProvider.js';
import type { SessionIo } from './session.js';
import { terminalText } from './terminalText.js';

/**
 * Writes `<command>: message` to stderr and gives the exit code (2: bad input or config). The
 * message may carry a server's, a model's or a tool's text: its control characters are escaped.
 */
export const failure =
  (io: SessionIo, command: string) =>
  (message: string, code = 2): number => {
    io.stderr.write(`${command}: ${terminalText(message)}\n`);
    return code;
  };

/**
 * config.toml for a command: `--config` or the default file, `--model` over the environment's
 * model. What the file has that nothing reads (a section OpenManus does not know) is said on stderr.
 */
export function loadCliConfig(
  values: { readonly config?: string | undefined; readonly model?: string | undefined },
  io: SessionIo,
  command: string,
): Result<OpenManusConfig, ConfigError> {
  const env = values.model ? { ...io.env, OPENMANUS_MODEL: values.model } : io.env;
  const config = loadConfig({ ...(values.config ? { path: values.config } : {}), env });
  if (config.isOk())
    for (const warning of config.value.warnings) io.stderr.write(`${command}: ${terminalText(warning)}\n`);
  return config;
}

/** `openmanus --sandbox`: an isolation of the agent's own tools, or a sandbox provider Manus works in. */
export type RunSandbox = { readonly isolation: SandboxMode } | { readonly provider: ProviderName };

/** `openmanus --sandbox`, checked (undefined when not given). */
export function runSandboxOption(value: string | undefined): Result<RunSandbox | undefined, string> {
  if (value !== undefined && isProviderName(value)) return ok({ provider: value });
  const isolation = sandboxOption(value);
  if (isolation.isOk()) return ok(isolation.value === undefined ? undefined : { isolation: isolation.value });
  const choices = ['auto', 'bwrap', 'none', ...PROVIDER_NAMES].map((name) => `"${name}"`);
  return err(`--sandbox must be ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}, got "${value}"`);
}

/**
 * The provider Manus works in: the one `--sandbox` names; else, when `--sandbox` is not given and
 * config.toml's `[sandbox]` says `use_sandbox = true`, Docker (as in OpenManus, where it covered only
 * the editor: here Python and bash too); else none.
 */
export function providerOf(option: RunSandbox | undefined, sandboxTable: unknown): ProviderName | undefined {
  if (option) return 'provider' in option ? option.provider : undefined;
  return tableOf(sandboxTable)?.use_sandbox === true ? 'docker' : undefined;
}

/** How tools on this host are isolated: `--sandbox auto|bwrap|none`, else config.toml's, else `auto`. */
export const isolationOf = (option: RunSandbox | undefined, configured: SandboxMode | undefined): SandboxMode =>
  (option && 'isolation' in option ? option.isolation : undefined) ?? configured ?? 'auto';

/** A table of config.toml that is kept unvalidated (`sections`), when it is one. */
const tableOf = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** `--sandbox` of the commands that isolate their own tools, checked (undefined when not given). */
export function sandboxOption(value: string | undefined): Result<SandboxMode | undefined, string> {
  if (value === undefined || value === 'auto' || value === 'none' || value === 'bwrap') return ok(value);
  return err(`--sandbox must be "auto", "bwrap" or "none", got "${value}"`);
}

/** `--max-steps`, checked (undefined when not given). */
/** A comma-separated list of names (`--approve python_execute,bash`), blanks left out. */
export const namesOption = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);

export function maxStepsOption(value: string | undefined): Result<number | undefined, string> {
  const steps = Number(value);
  if (value === undefined) return ok(undefined);
  return Number.isInteger(steps) && steps >= 1
    ? ok(steps)
    : err(`--max-steps must be a positive whole number, got "${value}"`);
}

/**
 * `--record <file>`: the model port recording every call into a transcript (the workspace path
 * written as `{{workspace}}`, so that it replays from another directory), else the port as it is.
 */
export const recordedTo = (file: string | undefined, llm: LlmPort, workspace: string): LlmPort =>
  file === undefined ? llm : recordLlm(llm, { file: resolve(file), placeholders: { workspace: resolve(workspace) } });
