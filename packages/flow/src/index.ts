// @openmanus/flow: the planning tool and PlanningFlow (a pure reducer over plan state, run by core's driver).
// The pure parts alone are `@openmanus/flow/kernel`; this entry adds the shell: the tool, runFlow and its kin.

export { restoreFlow } from './flowSchema.js';
export * from './kernel.js';
export { createPlanningFlow, type PlanningFlow, type PlanningFlowOptions } from './planningFlow.js';
export { createPlanningTool, PLANNING_TOOL } from './planningTool.js';
export {
  agentFinished,
  type FlowItem,
  type FlowOutcome,
  type FlowPerformers,
  type FlowRunOptions,
  resumeFlow,
  runFlow,
  streamFlow,
} from './runFlow.js';
