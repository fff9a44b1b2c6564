// @openmanus/tools: every OpenManus tool beyond the Manus four, and the agent presets that use them.

export { CHART_TYPES, type ChartRequest, type ChartType } from './dataAnalysis/chartPlan.js';
export {
  createDataAnalysis,
  type DataAnalysisOptions,
  dataAnalysisNextStepPrompt,
  dataAnalysisSystemPrompt,
} from './dataAnalysis/dataAnalysis.js';
export {
  CHART_DIR,
  CHART_OUTPUTS,
  type ChartOutput,
  createDataVisualization,
  type DataVisualizationOptions,
} from './dataAnalysis/dataVisualization.js';
export { CHART_LANGUAGES, type ChartLanguage } from './dataAnalysis/insights.js';
export { createVisualizationPreparation } from './dataAnalysis/visualizationPreparation.js';
export {
  CHAT_COMPLETION_TOOL,
  type ChatCompletionInput,
  type ChatCompletionOptions,
  type ChatCompletionToolOptions,
  createChatCompletion,
  createChatCompletionTool,
  StructuredOutputError,
  type StructuredOutputFailure,
} from './structuredOutput.js';
