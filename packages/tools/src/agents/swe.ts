import {
  type Agent,
  createAgent,
  createStrReplaceEditor,
  defaultPolicies,
  type SandboxProvider,
  type Tool,
  terminate,
} from '@openmanus/core';
import { type BashOptions, createBash } from '../bash/bashTool.js';
import { workspaceDir } from '../workspace.js';

export interface SweAgentOptions {
  /** The code base the agent works on: the shell starts there and the editor edits only there (default `./workspace`). */
  readonly workspace?: string;
  /** Most steps a task may take: the agent's `stepLimit` (default 20, as in OpenManus). */
  readonly maxSteps?: number;
  readonly maxObserve?: number;
  /** Most input tokens one request may carry: a `tokenBudget` (`max_input_tokens` of the profile); none by default. */
  readonly maxInputTokens?: number;
  /** `[llm.<profile>]` of config.toml to use (default `swe`). */
  readonly llmProfile?: string;
  /** The shell's timeouts, output cap and isolation on this host. */
  readonly bash?: Omit<BashOptions, 'workspace' | 'sandboxProvider'>;
  /** More tools (file_saver, web search, MCP tools, ...). */
  readonly extraTools?: readonly Tool[];
  /**
   * Where the shell and the editor work: one sandbox of this provider per run (a container, say),
   * `workspace` then being the code base as seen inside it. Default: this host.
   */
  readonly sandboxProvider?: SandboxProvider;
}

export const sweSystemPrompt = (workspace: string) =>
  [
    `You are an autonomous programmer working on the code base in ${workspace}, through a shell and a file editor.`,
    '',
    'Tools:',
    '- `bash` runs commands in one persistent shell that starts in the workspace: cd and variables carry over between calls.',
    '  Commands get no input, so never start interactive programs (vim, less, a bare python or node); run anything that',
    '  must keep running in the background with its output sent to a file.',
    '- `str_replace_editor` views files with line numbers and edits them, with absolute paths inside the workspace.',
    '  `old_str` must match the file exactly once, indentation included; write `new_str` with its full indentation.',
    '- `terminate` ends the task.',
    '',
    'Work in small steps: say briefly what you will do next and why, make one tool call, and read its result before the',
    'next. Find the relevant code before changing it, and check each change by running the code or its tests. When the',
    'task is done, or cannot be done, summarise what you changed and how you checked it, then call `terminate`.',
  ].join('\n');

/** OpenManus's SWEAgent: a programmer with bash, the file editor and terminate, 20 steps. */
export function createSweAgent(options: SweAgentOptions = {}): Agent {
  const workspace = workspaceDir(options.workspace);
  const sandboxed = options.sandboxProvider ? { sandboxProvider: options.sandboxProvider } : {};
  return createAgent({
    name: 'swe',
    description: 'An autonomous programmer that works in a shell and a file editor to solve coding tasks.',
    systemPrompt: sweSystemPrompt(workspace),
    tools: [
      createBash({ ...options.bash, workspace, ...sandboxed }),
      createStrReplaceEditor({ workspace, ...sandboxed }),
      terminate,
      ...(options.extraTools ?? []),
    ],
    llmProfile: options.llmProfile ?? 'swe',
    ...(options.maxObserve !== undefined ? { maxObserve: options.maxObserve } : {}),
    policies: defaultPolicies({ maxSteps: options.maxSteps ?? 20, maxInputTokens: options.maxInputTokens }),
  });
}
