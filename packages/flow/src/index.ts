// @openmanus/flow: the planning tool and PlanningFlow (a pure reducer over plan state, run by core's driver).
export { restoreFlow } from './flowSchema.js';
export {
  type AgentReport,
  type BlockedStep,
  type CurrentStep,
  type ExecutorInfo,
  FLOW_SCHEMA_VERSION,
  type FlowConfig,
  type FlowEffect,
  type FlowEvent,
  type FlowFinishReason,
  type FlowObservation,
  type FlowState,
  type FlowStatus,
  type FlowWork,
  isFlowFinal,
  type LlmPurpose,
  type WhenBlocked,
} from './flowState.js';
export {
  type FlowTransition,
  flowStep,
  InvalidFlowEventError,
  initialFlowState,
  planOf,
  routeStep,
  type Verdict,
  verdictOf,
} from './flowStep.js';
export { createPlanningFlow, type PlanningFlow, type PlanningFlowOptions } from './planningFlow.js';
export { createPlanningTool, PLANNING_TOOL } from './planningTool.js';
export {
  applyPlanning,
  emptyPlanBook,
  PLANNING_COMMANDS,
  type Plan,
  type PlanBook,
  type PlanningCommand,
  type PlanningCommandName,
  type PlanningOutcome,
  type PlanStep,
  planningParameters,
  renderPlan,
  STEP_MARKS,
  STEP_STATUSES,
  type StepStatus,
} from './plans.js';
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
