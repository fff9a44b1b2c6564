// `--sandbox <provider>`: the sandbox a run's tools work in, by name. The Docker provider lives in
// @openmanus/sandbox, loaded only when asked for (it brings the Docker client with it).
import { resolve } from 'node:path';
import {
  createLocalSandboxProvider,
  err,
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
  /** `[sandbox]` of config.toml, for the Docker provider (image, work_dir, limits, network). */
  readonly docker?: Readonly<Record<string, unknown>>;
  /** Where a module is loaded from (the Docker provider's package); for tests. */
  readonly load?: (specifier: string) => Promise<unknown>;
}

const DOCKER_PACKAGE = '@openmanus/sandbox';

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
  let module: { createDockerSandboxProvider?: unknown };
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
  if (typeof module.createDockerSandboxProvider !== 'function')
    return err(`--sandbox docker: ${DOCKER_PACKAGE} has no createDockerSandboxProvider`);
  const create = module.createDockerSandboxProvider as (settings: Record<string, unknown>) => SandboxProvider;
  try {
    const workDir = config.docker?.work_dir;
    return ok({
      provider: create({ ...config.docker, workspace: resolve(config.workspace) }),
      workspace: typeof workDir === 'string' ? workDir : '/workspace',
    });
  } catch (error) {
    return err(`--sandbox docker: ${(error as Error).message}`);
  }
}
