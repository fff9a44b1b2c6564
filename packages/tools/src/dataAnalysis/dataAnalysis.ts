import {
  type Agent,
  createAgent,
  createPythonExecute,
  defaultPolicies,
  type PythonExecuteOptions,
  type SandboxProvider,
  type Tool,
  terminate,
} from '@openmanus/core';
import { workspaceDir } from '../workspace.js';
import { CHART_DIR, createDataVisualization } from './dataVisualization.js';
import { createVisualizationPreparation } from './visualizationPreparation.js';

export interface DataAnalysisOptions {
  /**
   * Where the data is read and the analysis, charts and reports are written (default
   * `./workspace`); with `sandboxProvider`, the workspace as code in the sandbox sees it (what the
   * model is told: a container's `work_dir`).
   */
  readonly workspace?: string;
  /** `[llm.<profile>]` of config.toml to use (default `data_analysis`). */
  readonly llmProfile?: string;
  /** More tools, e.g. web_search to find data. */
  readonly extraTools?: readonly Tool[];
  /** Most steps a task may take: the agent's `stepLimit` (default 20, OpenManus's). */
  readonly maxSteps?: number;
  readonly maxObserve?: number;
  /** Most input tokens one request may carry: a `tokenBudget` (`max_input_tokens` of the profile); none by default. */
  readonly maxInputTokens?: number;
  /** For python_execute and visualization_preparation (isolation on this host, interpreter, timeouts). */
  readonly python?: Omit<PythonExecuteOptions, 'workspace' | 'sandboxProvider'>;
  /** Largest CSV file a chart is drawn from, in bytes. */
  readonly maxCsvBytes?: number;
  /**
   * Where Python runs and the data and charts live: one sandbox of this provider per run (a
   * container, say), shared by python_execute, visualization_preparation and data_visualization,
   * so the CSVs Python writes there are the ones the charts are drawn from, and the charts go
   * there too. Default: this host.
   */
  readonly sandboxProvider?: SandboxProvider;
}

export const dataAnalysisSystemPrompt = (workspace: string) =>
  [
    'You are a data analyst agent. You answer questions about data by analysing it with Python, drawing charts,',
    'and writing up what the numbers show.',
    `Your workspace directory is ${workspace}: the data is there, and everything you make goes there, with absolute paths.`,
    'Never invent a figure: every number you report comes from code you ran on the data.',
  ].join(' ');

export const dataAnalysisNextStepPrompt = [
  'Work in this order, one tool call at a time:',
  '1. python_execute: look at the data (columns, types, size, missing values), then compute what the task asks; print the results.',
  '2. visualization_preparation: write one CSV per chart with just the rows and columns to draw, and a JSON file',
  '   listing them ([{"csvFilePath", "chartTitle", optionally "chartType", "x", "y", "color", "insights"}]).',
  `3. data_visualization: draw the charts from that JSON file (they go to ${CHART_DIR}/ in the workspace).`,
  '4. If a report is asked for, write it with python_execute, linking the charts.',
  'When done, or when it cannot be done, say what you found and where the files are, then call `terminate`.',
].join('\n');

/** OpenManus's DataAnalysis agent: Python analysis, chart preparation, charts, and terminate. */
export function createDataAnalysis(options: DataAnalysisOptions = {}): Agent {
  const workspace = workspaceDir(options.workspace);
  const sandboxed = options.sandboxProvider ? { sandboxProvider: options.sandboxProvider } : {};
  const python = { workspace, ...options.python, ...sandboxed };
  return createAgent({
    name: 'Data_Analysis',
    description: 'Analyses data with Python and presents it in charts and reports.',
    systemPrompt: dataAnalysisSystemPrompt(workspace),
    nextStepPrompt: dataAnalysisNextStepPrompt,
    tools: [
      createPythonExecute(python),
      createVisualizationPreparation(python),
      createDataVisualization({
        workspace,
        ...sandboxed,
        ...(options.maxCsvBytes !== undefined ? { maxCsvBytes: options.maxCsvBytes } : {}),
      }),
      terminate,
      ...(options.extraTools ?? []),
    ],
    maxObserve: options.maxObserve ?? 15_000,
    llmProfile: options.llmProfile ?? 'data_analysis',
    policies: defaultPolicies({ maxSteps: options.maxSteps ?? 20, maxInputTokens: options.maxInputTokens }),
  });
}
