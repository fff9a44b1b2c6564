// @openmanus/flow: the planning tool and PlanningFlow.
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
  renderPlan,
  STEP_STATUSES,
  type StepStatus,
} from './plans.js';
