import { defineTool, err } from '@openmanus/core';
import { applyPlanning, emptyPlanBook, type PlanBook, planningParameters } from './plans.js';

/** The planning tool's name, which is also where a run keeps its plans (`state.toolData.planning`). */
export const PLANNING_TOOL = 'planning';

/**
 * `planning`: creates and tracks plans of steps for solving a task. The plans are the run's data
 * (kept in its state), so they survive a checkpoint and resume, and two runs never share them.
 */
export function createPlanningTool() {
  return defineTool({
    name: PLANNING_TOOL,
    description:
      'A planning tool that lets the agent create and manage plans for solving complex tasks: create plans, update their steps, and track progress.',
    parameters: planningParameters,
    execute: (args, scope) => {
      const book = (scope.data as PlanBook | undefined) ?? emptyPlanBook;
      const result = applyPlanning(book, args);
      if (!result.isOk()) return err(result.error);
      scope.setData(result.value.book);
      return result.value.output;
    },
  });
}
