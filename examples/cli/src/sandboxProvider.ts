// `--sandbox <provider>`: the sandbox a run's tools work in, by name. The Docker and Daytona
// providers live in @openmanus/sandbox, loaded only when asked for (they bring their clients).
import { resolve } from 'node:path';
import {
  createLocalSandboxProvider,
  describeConfigError,
  err,
  type OpenManusConfig,
  ok,
  type Result,
  type SandboxMode,
  type SandboxProvider,
} from '@openmanus/core';

export const PROVIDER_NAMES = ['local', 'docker', 'daytona'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export const isProviderName = (name: string): name is ProviderName =>
  (PROVIDER_NAMES as readonly string[]).includes(name);

export interface ProviderConfig {
  /** The host workspace: the local sandbox's, bound into a container at its `work_dir`. */
  readonly workspace: string;
  /** How the local provider confines commands (default `auto`). */
  readonly isolation?: SandboxMode;
  /**
   * The loaded config.toml: `[sandbox]` sets up the Docker provider (image, work_dir, limits,
   * network) and the workspace and time limit inside a Daytona sandbox; `[daytona]` the Daytona service.
   */
  readonly config?: OpenManusConfig;
  /** Where a line for the user goes: a new sandbox's preview links (Daytona's desktop and website). */
  readonly onNotice?: (line: string) => void;
  /** Where a module is loaded from (the providers' package); for tests. */
  readonly load?: (specifier: string) => Promise<unknown>;
}

const SANDBOX_PACKAGE = '@openmanus/sandbox';
type SandboxPackage = Partial<typeof import('@openmanus/sandbox')>;

/** A config with no sections: the providers' defaults. */
const emptyConfig = { sections: {} } as unknown as OpenManusConfig;

/** The ports of a sandbox image's desktop (noVNC) and website, as SandboxManus announces them. */
const VNC_PORT = 6080;
const WEBSITE_PORT = 8080;

/** A provider, and the workspace as code in its sandboxes sees it (what the model is told). */
export interface NamedProvider {
  readonly provider: SandboxProvider;
  readonly workspace: string;
}

/** `provider`, saying each new sandbox's desktop and website links when it has them (a remote sandbox). */
export function announcingLinks(provider: SandboxProvider, notice: (line: string) => void): SandboxProvider {
  return {
    name: provider.name,
    async create(request) {
      const sandbox = await provider.create(request);
      if (sandbox.previewUrl) {
        const links = await Promise.all([sandbox.previewUrl(VNC_PORT), sandbox.previewUrl(WEBSITE_PORT)]).then(
          ([vnc, website]) =>
            `its desktop (VNC, port ${VNC_PORT}): ${vnc.url} · its website (port ${WEBSITE_PORT}): ${website.url}`,
          (error: Error) => `its preview links could not be had: ${error.message}`,
        );
        notice(`${sandbox.provider} sandbox for this run is ready — ${links}`);
      }
      return sandbox;
    },
  };
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
  let module: SandboxPackage;
  try {
    module = (await load(SANDBOX_PACKAGE)) as SandboxPackage;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND';
    return err(
      missing
        ? `--sandbox ${name} needs the ${SANDBOX_PACKAGE} package, which is not installed (pnpm add ${SANDBOX_PACKAGE})`
        : `--sandbox ${name}: ${SANDBOX_PACKAGE} could not be loaded: ${(error as Error).message}`,
    );
  }
  try {
    return name === 'docker' ? dockerProvider(module, config) : daytonaProvider(module, config);
  } catch (error) {
    return err(`--sandbox ${name}: ${(error as Error).message}`);
  }
}

function dockerProvider(module: SandboxPackage, config: ProviderConfig): Result<NamedProvider, string> {
  const { createDockerSandboxProvider: create, sandboxSettingsFrom: settingsFrom } = module;
  if (!create || !settingsFrom) return err(`--sandbox docker: ${SANDBOX_PACKAGE} has no createDockerSandboxProvider`);
  const settings = settingsFrom(config.config ?? emptyConfig);
  if (!settings.isOk()) return err(`--sandbox docker: ${describeConfigError(settings.error)}`);
  const provider = create({ ...settings.value, workspace: resolve(config.workspace) });
  return ok({ provider, workspace: settings.value.workDir });
}

/**
 * SandboxManus's remote sandbox: `[daytona]` says where and how (its absence is an error here and
 * nowhere else); the workspace inside is `[sandbox]`'s `work_dir`, a command's time limit its `timeout`.
 */
function daytonaProvider(module: SandboxPackage, config: ProviderConfig): Result<NamedProvider, string> {
  const { createDaytonaSandboxProvider: create, daytonaSettingsFrom, sandboxSettingsFrom } = module;
  if (!create || !daytonaSettingsFrom || !sandboxSettingsFrom)
    return err(`--sandbox daytona: ${SANDBOX_PACKAGE} has no createDaytonaSandboxProvider`);
  const loaded = config.config ?? emptyConfig;
  const daytona = daytonaSettingsFrom(loaded);
  if (!daytona.isOk()) return err(`--sandbox daytona: ${describeConfigError(daytona.error)}`);
  const sandbox = sandboxSettingsFrom(loaded);
  if (!sandbox.isOk()) return err(`--sandbox daytona: ${describeConfigError(sandbox.error)}`);
  const provider = create(daytona.value, {
    workspace: sandbox.value.workDir,
    defaultTimeoutMs: sandbox.value.timeout * 1000,
  });
  return ok({
    provider: config.onNotice ? announcingLinks(provider, config.onNotice) : provider,
    workspace: sandbox.value.workDir,
  });
}
