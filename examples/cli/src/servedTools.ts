import { createBrowserUse } from '@openmanus/browser';
import { createStrReplaceEditor, type SandboxMode, type Tool, terminate } from '@openmanus/core';
import { createBash } from '@openmanus/tools';

/** What the command line says about the tools `openmanus mcp-server` serves. */
export interface ServedToolSettings {
  /** Where bash starts and the only place the editor edits (an absolute path). */
  readonly workspace: string;
  /** Isolation of bash. */
  readonly sandbox: SandboxMode;
}

export type ServedTool = (settings: ServedToolSettings) => Tool;

/**
 * The tools `openmanus mcp-server` serves, as OpenManus's run_mcp_server.py does: bash,
 * browser_use (public sites only; downloads and uploads in the workspace), str_replace_editor and
 * terminate.
 */
export const SERVED_TOOLS: readonly ServedTool[] = [
  (settings) => createBash({ workspace: settings.workspace, sandbox: settings.sandbox }),
  (settings) => createBrowserUse({ workspace: settings.workspace }),
  (settings) => createStrReplaceEditor({ workspace: settings.workspace }),
  () => terminate,
];
