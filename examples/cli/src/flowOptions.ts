import { type ConfigError, err, type OpenManusConfig, ok, type Result } from '@openmanus/core';
import type { WhenBlocked } from '@openmanus/flow';

const WHEN_BLOCKED: readonly WhenBlocked[] = ['continue', 'replan', 'stop'];

/** `--when-blocked`, checked (undefined when not given). */
export function whenBlockedOption(value: string | undefined): Result<WhenBlocked | undefined, string> {
  if (value === undefined) return ok(undefined);
  return WHEN_BLOCKED.includes(value as WhenBlocked)
    ? ok(value as WhenBlocked)
    : err(`--when-blocked must be "continue", "replan" or "stop", got "${value}"`);
}

/** `--timeout <seconds>` in ms (default 3600 s, OpenManus's limit of a whole flow). */
export function timeoutOption(value: string | undefined): Result<number, string> {
  if (value === undefined) return ok(3_600_000);
  const seconds = Number(value);
  return value.trim() !== '' && Number.isFinite(seconds) && seconds > 0
    ? ok(Math.max(1, Math.round(seconds * 1000)))
    : err(`--timeout must be a positive number of seconds, got "${value}"`);
}

/** `[runflow] use_data_analysis_agent` of config.toml (OpenManus's key): false when absent. */
export function useDataAnalysisAgent(config: OpenManusConfig): Result<boolean, ConfigError> {
  const where = config.file ? { file: config.file } : {};
  const section = config.sections.runflow;
  if (section === undefined) return ok(false);
  if (typeof section !== 'object' || section === null || Array.isArray(section)) {
    return err({ code: 'CONFIG_INVALID', ...where, key: '[runflow]', message: 'expected a table' });
  }
  const value = (section as Record<string, unknown>).use_data_analysis_agent;
  if (value === undefined || typeof value === 'boolean') return ok(value ?? false);
  return err({
    code: 'CONFIG_INVALID',
    ...where,
    key: '[runflow].use_data_analysis_agent',
    message: `expected true or false, got ${JSON.stringify(value)}`,
  });
}
