import { resolve } from 'node:path';
import { type Agent, createAgent } from '../kernel/agent.js';
import { type ApprovalRule, requireApproval } from '../kernel/approvals.js';
import { defaultPolicies } from '../kernel/policies.js';
import type { SandboxProvider } from '../shell/sandboxPort.js';
import { askHuman } from '../tools/askHuman.js';
import type { Tool } from '../tools/defineTool.js';
import { createPythonExecute, type PythonExecuteOptions } from '../tools/pythonExecute.js';
import { createStrReplaceEditor } from '../tools/strReplaceEditor.js';
import { terminate } from '../tools/terminate.js';

export interface ManusOptions {
  /** Where Manus reads and writes files; python runs there too (default `./workspace`). */
  readonly workspace?: string;
  /** `[llm.<profile>]` of config.toml to use (default: the agent's name, lowercased). */
  readonly llmProfile?: string;
  /** More tools, e.g. from @openmanus/tools or MCP servers. */
  readonly extraTools?: readonly Tool[];
  /** Most steps a task may take: the agent's `stepLimit` (default 20, OpenManus's). */
  readonly maxSteps?: number;
  readonly maxObserve?: number;
  /** Most input tokens one request may carry: a `tokenBudget` (config.toml's `max_input_tokens`); none by default. */
  readonly maxInputTokens?: number;
  /** Calls that need the host's approval first: tool names, per tool `true` or a predicate on the arguments, or a function. */
  readonly approvals?: ApprovalRule;
  /** Tool names that must run at most once: after a crash the model is told instead of the call running again. */
  readonly atMostOnce?: readonly string[];
  readonly python?: Omit<PythonExecuteOptions, 'workspace'>;
  /**
   * Where Python runs and the editor edits: this provider's sandbox, one per run, made on first
   * use and removed when the run ends (a run given a sandbox of its own uses that one instead).
   * `workspace` is then the workspace as the sandbox shows it.
   */
  readonly sandboxProvider?: SandboxProvider;
}

export const manusSystemPrompt = (workspace: string) =>
  [
    'You are Manus, a general-purpose AI agent. You solve the task you are given step by step with your tools:',
    'running Python, reading and editing files, asking the user when only they can answer, and finishing when done.',
    `Your workspace directory is ${workspace}. Read and write files there, with absolute paths.`,
    'Deliverables (reports, pages, data) belong in the workspace as files; say in your final message where they are.',
  ].join(' ');

export const manusNextStepPrompt = [
  'Decide the single most useful next action and take it with a tool. For a complex task, break it into steps and do one at a time.',
  'After each tool result, say briefly what it showed and what comes next.',
  'When the task is complete, or cannot be completed, summarise the outcome and call `terminate`.',
].join(' ');

/** The tool flagged at-most-once when the host asked for it by name. */
const flagged = (tool: Tool, options: ManusOptions): Tool =>
  options.atMostOnce?.includes(tool.spec.name) ? { ...tool, spec: { ...tool.spec, atMostOnce: true } } : tool;

/** The Manus agent: OpenManus's defaults (20 steps, observations cut at 10000) and its tools. */
export function createManus(options: ManusOptions = {}): Agent {
  const workspace = resolve(options.workspace ?? 'workspace');
  const inSandbox = options.sandboxProvider ? { sandboxProvider: options.sandboxProvider } : {};
  const base: Tool[] = [
    createPythonExecute({ workspace, ...options.python, ...inSandbox }),
    createStrReplaceEditor({ workspace, ...inSandbox }),
    askHuman,
    terminate,
    ...(options.extraTools ?? []),
  ];
  const tools = base.map((tool) => flagged(tool, options));
  return createAgent({
    name: 'Manus',
    description: 'A general agent that solves tasks with Python, files and the user.',
    systemPrompt: manusSystemPrompt(workspace),
    nextStepPrompt: manusNextStepPrompt,
    tools,
    maxObserve: options.maxObserve ?? 10_000,
    llmProfile: options.llmProfile ?? 'manus',
    policies: [
      ...defaultPolicies({ maxSteps: options.maxSteps ?? 20, maxInputTokens: options.maxInputTokens }),
      ...(options.approvals ? [requireApproval(options.approvals)] : []),
    ],
  });
}
