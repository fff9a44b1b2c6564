import { defineTool, err } from '@openmanus/core';
import { z } from 'zod';
import { applyPlanning, emptyPlanBook, PLANNING_COMMANDS, type PlanBook, STEP_STATUSES } from './plans.js';

/** The planning tool's name, which is also where a run keeps its plans (`state.toolData.planning`). */
export const PLANNING_TOOL = 'planning';

const planningParameters = z.strictObject({
  command: z
    .enum(PLANNING_COMMANDS)
    .describe('The command to run: create, update, list, get, set_active, mark_step or delete.'),
  plan_id: z
    .string()
    .optional()
    .describe(
      'The plan. Required for create, update, set_active and delete; get and mark_step use the active plan without it.',
    ),
  title: z.string().optional().describe("The plan's title. Required for create; optional for update."),
  steps: z
    .array(z.string())
    .optional()
    .describe("The plan's steps. Required for create; for update, a step keeps its status only if unchanged in place."),
  step_index: z.number().int().optional().describe('The step to mark (from 0). Required for mark_step.'),
  step_status: z.enum(STEP_STATUSES).optional().describe('The status to give the step, for mark_step.'),
  step_notes: z.string().optional().describe('Notes on the step, for mark_step.'),
});

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
      if (!result.ok) return err(result.error);
      scope.setData(result.value.book);
      return result.value.output;
    },
  });
}
