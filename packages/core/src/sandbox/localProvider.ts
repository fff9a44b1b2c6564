// The `local` sandbox provider's face: what it does (local.ts) loads when a run first needs a sandbox.
import { lazyPromise } from '../lazyModule.js';
import type { SandboxProvider } from '../shell/sandboxPort.js';
import type { SandboxMode } from './bwrap.js';

export interface LocalSandboxOptions {
  /**
   * `auto` (default): bubblewrap when it works here (only the workspace writable, the system
   * read-only, no network, nothing of the host's environment), else what `none` gives, said once
   * per process. `bwrap`: bubblewrap, or no sandbox at all (the tool says why). `none`: no
   * bubblewrap; when the host runs as root, each command still runs as a separate unprivileged
   * uid (a long-lived shell as the host's user, environment scrubbed).
   */
  readonly isolation?: SandboxMode;
  /** The workspace of a run that has none (default: a temporary directory, removed with the sandbox). */
  readonly workspace?: string;
  /** Where the once-per-process notice that bubblewrap is unavailable goes (default `process.emitWarning`). */
  readonly onNotice?: (message: string) => void;
}

const local = lazyPromise(() => import('./local.js'));

/**
 * The `local` provider: each run's sandbox is its workspace on this host (a temporary one when the
 * run has none), its commands confined as `isolation` says.
 */
export function createLocalSandboxProvider(options: LocalSandboxOptions = {}): SandboxProvider {
  return {
    name: 'local',
    create: async (request) => (await local()).openLocalSandbox(options, request),
  };
}
