// OpenManus's `[sandbox]` table of config.toml: its keys, defaults and meaning, checked per key.
import { type ConfigError, err, type OpenManusConfig, ok, type Result } from '@openmanus/core';
import { z } from 'zod';

/** The Docker sandbox's settings, named after OpenManus's `[sandbox]` keys. */
export interface SandboxSettings {
  /** Whether runs get a sandbox at all (OpenManus's switch; the providers ignore it). */
  readonly useSandbox: boolean;
  readonly image: string;
  /** Where the run's workspace appears inside the container. */
  readonly workDir: string;
  /** Docker's notation: "512m", "1g", "65536k", or bytes. */
  readonly memoryLimit: string;
  /** CPUs the container may use (1.0 = one core). */
  readonly cpuLimit: number;
  /** A command's time limit when the caller gives none, in seconds. */
  readonly timeout: number;
  readonly networkEnabled: boolean;
}

export const DEFAULT_SANDBOX_SETTINGS: SandboxSettings = {
  useSandbox: false,
  image: 'python:3.12-slim',
  workDir: '/workspace',
  memoryLimit: '512m',
  cpuLimit: 1.0,
  timeout: 300,
  networkEnabled: false,
};

const UNITS: Readonly<Record<string, number>> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** A memory limit in bytes, or undefined when it is not Docker's notation or below Docker's 6 MiB floor. */
export function memoryBytes(limit: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([bkmg]?)$/i.exec(limit.trim());
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * (UNITS[(match[2] ?? '').toLowerCase()] ?? Number.NaN));
  return Number.isSafeInteger(bytes) && bytes >= 6 * 1024 ** 2 ? bytes : undefined;
}

const sandboxSection = z
  .object({
    use_sandbox: z.boolean().optional(),
    image: z.string().min(1).optional(),
    work_dir: z
      .string()
      .refine((dir) => dir.startsWith('/') && !dir.split('/').includes('..') && dir !== '/', {
        error: 'must be an absolute directory inside the container (not / and without ..)',
      })
      .optional(),
    memory_limit: z
      .string()
      .refine((limit) => memoryBytes(limit) !== undefined, {
        error: 'must be a size such as "512m" or "1g" (at least 6m)',
      })
      .optional(),
    cpu_limit: z.number().positive().max(1024).optional(),
    timeout: z.number().positive().max(86_400).optional(),
    network_enabled: z.boolean().optional(),
  })
  .strict();

/** `[sandbox]` of a loaded config, with OpenManus's defaults; a bad key is named in the error. */
export function sandboxSettingsFrom(config: OpenManusConfig): Result<SandboxSettings, ConfigError> {
  const where = config.file ? { file: config.file } : {};
  const parsed = sandboxSection.safeParse(config.sections.sandbox ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys') {
      return err({
        code: 'CONFIG_INVALID',
        ...where,
        key: '[sandbox]',
        message: `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`,
      });
    }
    const path = issue?.path.join('.');
    return err({
      code: 'CONFIG_INVALID',
      ...where,
      key: path ? `[sandbox].${path}` : '[sandbox]',
      message: issue?.message ?? 'invalid',
    });
  }
  const section = parsed.data;
  const defaults = DEFAULT_SANDBOX_SETTINGS;
  return ok({
    useSandbox: section.use_sandbox ?? defaults.useSandbox,
    image: section.image ?? defaults.image,
    workDir: section.work_dir ?? defaults.workDir,
    memoryLimit: section.memory_limit ?? defaults.memoryLimit,
    cpuLimit: section.cpu_limit ?? defaults.cpuLimit,
    timeout: section.timeout ?? defaults.timeout,
    networkEnabled: section.network_enabled ?? defaults.networkEnabled,
  });
}
