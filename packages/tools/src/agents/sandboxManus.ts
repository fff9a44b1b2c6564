import { type Agent, createManus, type ManusOptions, type SandboxProvider } from '@openmanus/core';
import { type BashOptions, createBash } from '../bash/bashTool.js';
import { workspaceDir } from '../workspace.js';

export interface SandboxManusOptions extends Omit<ManusOptions, 'sandboxProvider'> {
  /** Where the run's shell, files and Python live: one sandbox of this provider per run, removed when the run ends. */
  readonly sandbox: SandboxProvider;
  /**
   * The workspace as code in the sandbox sees it, told to the model (default `./workspace`
   * resolved: where a local provider made with the same directory works; a container's is its
   * `work_dir`).
   */
  readonly workspace?: string;
  /** The shell's timeouts and output cap. */
  readonly bash?: Omit<BashOptions, 'workspace' | 'sandbox' | 'sandboxProvider'>;
}

/**
 * OpenManus's SandboxManus: Manus whose shell (bash, added), files and Python all work in one
 * sandbox of `sandbox` per run, so what Python writes the editor sees and bash can run. The
 * sandbox is made when a tool first needs it and removed, with everything running in it, when
 * the run ends.
 */
export function createSandboxManus(options: SandboxManusOptions): Agent {
  const { sandbox, bash, ...manus } = options;
  const workspace = workspaceDir(options.workspace);
  return createManus({
    ...manus,
    workspace,
    sandboxProvider: sandbox,
    extraTools: [createBash({ ...bash, workspace, sandboxProvider: sandbox }), ...(options.extraTools ?? [])],
  });
}
