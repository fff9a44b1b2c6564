import { type Agent, createManus, type ManusOptions, type SandboxProvider } from '@openmanus/core';
import { type BashOptions, createBash } from '../bash/bashTool.js';
import { withPreviewLinks } from '../sandbox/previewLinks.js';
import { createSandboxBrowser, type SandboxBrowserOptions } from '../sandbox/sandboxBrowser.js';
import { createSandboxVision, type SandboxVisionOptions } from '../sandbox/sandboxVision.js';
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
  /** sandbox_vision's limits: the largest image read, the size it is scaled down to. */
  readonly vision?: Omit<SandboxVisionOptions, 'sandboxProvider'>;
  /**
   * sandbox_browser, a browser in the sandbox driven through the automation service of OpenManus's
   * sandbox image: given by default to a Daytona sandbox (made from that image), to others when
   * options are given here; `false` leaves it out.
   */
  readonly browser?: Omit<SandboxBrowserOptions, 'sandboxProvider'> | false;
}

/**
 * OpenManus's SandboxManus: Manus whose shell (bash, added), files, Python and vision
 * (sandbox_vision, added) all work in one sandbox of `sandbox` per run, so what Python writes the
 * editor sees, bash can run and the model can look at; on Daytona, sandbox_browser drives the
 * browser of the sandbox's image. The sandbox is made when a tool first needs
 * it and removed, with everything running in it, when the run ends. A sandbox with preview links
 * (Daytona's) has them named in the observations: the website's when the editor writes the
 * workspace's index.html, a port's when a command starts serving on it.
 */
export function createSandboxManus(options: SandboxManusOptions): Agent {
  const { sandbox, bash, vision, browser, ...manus } = options;
  const workspace = workspaceDir(options.workspace);
  const browsing = browser ?? (sandbox.name === 'daytona' ? {} : false);
  const agent = createManus({
    ...manus,
    workspace,
    sandboxProvider: sandbox,
    extraTools: [
      createBash({ ...bash, workspace, sandboxProvider: sandbox }),
      createSandboxVision({ ...vision, sandboxProvider: sandbox }),
      ...(browsing ? [createSandboxBrowser({ ...browsing, sandboxProvider: sandbox })] : []),
      ...(options.extraTools ?? []),
    ],
  });
  return { ...agent, tools: withPreviewLinks(agent.tools, sandbox) };
}
