// `--sandbox <provider>`: the sandbox a run's tools work in, by name. The Docker provider lives in
// @openmanus/sandbox, loaded only when asked for (it brings the Docker client with it).
import { resolve } from 'node:path';
import {
  type ConfigError,
  createLocalSandboxProvider,
  describeConfigError,
  err,
  type OpenManusConfig,
  ok,
  type Result,
  type SandboxMode,
  type SandboxProvider,
} from '@openmanus/core';

export const PROVIDER_NAMES = ['local', 'docker'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export const isProviderName = (name: string): name is ProviderName =>
  (PROVIDER_NAMES as readonly string[]).includes(name);

export interface ProviderConfig {
  /** The host workspace: the local sandbox's, bound into a container at its `work_dir`. */
  readonly workspace: string;
  /** How the local provider confines commands (default `auto`). */
  readonly isolation?: SandboxMode;
  /** The loaded config.toml: its `[sandbox]` table sets up the Docker provider (image, work_dir, limits, network). */
  readonly config?: OpenManusConfig;
  /** Where a module is loaded from (the Docker provider's package); for tests. */
  readonly load?: (specifier: string) => Promise<unknown>;
}

const DOCKER_PACKAGE = '@openmanus/sandbox';

/** A config with no sections: the Docker provider's defaults. */
const emptyConfig = { sections: {} } as unknown as OpenManusConfig;

/** A provider, and the workspace as code in its sandboxes sees it (what the model is told). */
export interface NamedProvider {
  readonly provider: SandboxProvider;
  readonly workspace: string;
}

/** The provider `name` stands for, or why it cannot be had here. */
export async function sandboxProviderFor(
  name: ProviderName,
  config: ProviderConfig,
): Promise<Result<NamedProvider, string>> {
  if (name === 'local') {
    const workspace = resolve(config.workspace);
    return ok({
      provider: createLocalSandboxProvider({ isolation: config.isolation ?? 'auto', workspace }),
      workspace,
    });
  }
  const load = config.load ?? ((specifier: string) => import(specifier));
  let module: { createDockerSandboxProvider?: unknown; sandboxSettingsFrom?: unknown };
  try {
    module = (await load(DOCKER_PACKAGE)) as typeof module;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND';
    return err(
      missing
        ? `--sandbox docker needs the ${DOCKER_PACKAGE} package, which is not installed (pnpm add ${DOCKER_PACKAGE})`
        : `--sandbox docker: ${DOCKER_PACKAGE} could not be loaded: ${(error as Error).message}`,
    );
  }
  const { createDockerSandboxProvider: create, sandboxSettingsFrom: settingsFrom } = module;
  if (typeof create !== 'function' || typeof settingsFrom !== 'function')
    return err(`--sandbox docker: ${DOCKER_PACKAGE} has no createDockerSandboxProvider`);
  const settings = (settingsFrom as (config: OpenManusConfig) => Result<{ workDir: string }, ConfigError>)(
    config.config ?? emptyConfig,
  );
  if (!settings.ok) return err(`--sandbox docker: ${describeConfigError(settings.error)}`);
  try {
    const provider = (create as (options: object) => SandboxProvider)({
      ...settings.value,
      workspace: resolve(config.workspace),
    });
    return ok({ provider, workspace: settings.value.workDir });
  } catch (error) {
    return err(`--sandbox docker: ${(error as Error).message}`);
  }
}
