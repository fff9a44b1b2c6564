// @openmanus/tools: every OpenManus tool beyond the Manus four, and the agent presets that use them.
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
