// @openmanus/tools: every OpenManus tool beyond the Manus four, and the agent presets that use them.

export { createSweAgent, type SweAgentOptions, sweSystemPrompt } from './agents/swe.js';
export { type BashOptions, createBash } from './bash/bashTool.js';
export { createFileSaver, type FileSaverOptions } from './fileSaver.js';
