export {
  createDaytonaSandboxProvider,
  type DaytonaSandboxOptions,
  type DaytonaSandboxProvider,
} from './daytonaProvider.js';
export type { DaytonaSandbox, PreviewLink } from './daytonaSandbox.js';
export { type DaytonaSettings, DEFAULT_DAYTONA_SETTINGS, daytonaSettingsFrom } from './daytonaSettings.js';
export {
  createDockerSandboxProvider,
  type DockerSandboxOptions,
  type DockerSandboxProvider,
  SANDBOX_LABEL,
} from './dockerProvider.js';
export type { DockerSandbox } from './dockerSandbox.js';
export { EngineTimeoutError } from './engineCall.js';
export {
  createSandboxManager,
  type ManagedSandbox,
  type SandboxManager,
  type SandboxManagerOptions,
} from './manager.js';
export { DEFAULT_SANDBOX_SETTINGS, memoryBytes, type SandboxSettings, sandboxSettingsFrom } from './settings.js';
