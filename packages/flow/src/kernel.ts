// @openmanus/flow/kernel: the flow's pure parts — its reducer, its state and the planning commands —
// no I/O and nothing of the shell (no runFlow, no driver), for hosts that drive a flow themselves or
// test its decisions by feeding it events.
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
