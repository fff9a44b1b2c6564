// Plans as data: the planning tool's commands as a pure function from one plan book to the next.
import { err, ok, type Result } from '@openmanus/core/kernel';
import { z } from 'zod';

export const STEP_STATUSES = ['not_started', 'in_progress', 'completed', 'blocked'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export interface PlanStep {
  readonly text: string;
  readonly status: StepStatus;
  readonly notes: string;
}

export interface Plan {
  readonly id: string;
  readonly title: string;
  readonly steps: readonly PlanStep[];
}

/** Every plan of a run, by id, and the one commands default to. */
export interface PlanBook {
  readonly plans: Readonly<Record<string, Plan>>;
  readonly active?: string;
}

export const PLANNING_COMMANDS = ['create', 'update', 'list', 'get', 'set_active', 'mark_step', 'delete'] as const;
export type PlanningCommandName = (typeof PLANNING_COMMANDS)[number];

/** One call of the planning tool, with OpenManus's parameter names. */
export interface PlanningCommand {
  readonly command: PlanningCommandName;
  readonly plan_id?: string;
  readonly title?: string;
  readonly steps?: readonly string[];
  readonly step_index?: number;
  readonly step_status?: StepStatus;
  readonly step_notes?: string;
}

/** The planning tool's arguments, as OpenManus names them: only `command` is required, nothing else is allowed. */
export const planningParameters = z.strictObject({
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

export interface PlanningOutcome {
  readonly book: PlanBook;
  readonly output: string;
}

export const emptyPlanBook: PlanBook = { plans: {} };

/** How `renderPlan` marks a step of each status. */
export const STEP_MARKS: Readonly<Record<StepStatus, string>> = {
  not_started: '[ ]',
  in_progress: '[→]',
  completed: '[✓]',
  blocked: '[!]',
};

/** Applies one command: the next book and what to tell the model, or why the command cannot be done. */
export function applyPlanning(book: PlanBook, command: PlanningCommand): Result<PlanningOutcome, string> {
  switch (command.command) {
    case 'create':
      return create(book, command);
    case 'update':
      return update(book, command);
    case 'list':
      return ok({ book, output: list(book) });
    case 'get':
      return withPlan(book, command.plan_id || book.active, (plan) => ok({ book, output: renderPlan(plan) }));
    case 'set_active':
      if (!command.plan_id) return missing('plan_id', 'set_active');
      return withPlan(book, command.plan_id, (plan) =>
        ok({
          book: { ...book, active: plan.id },
          output: `Plan '${plan.id}' is now the active plan.\n\n${renderPlan(plan)}`,
        }),
      );
    case 'mark_step':
      return markStep(book, command);
    case 'delete':
      if (!command.plan_id) return missing('plan_id', 'delete');
      return withPlan(book, command.plan_id, (plan) => {
        const { [plan.id]: _deleted, ...plans } = book.plans;
        const active = book.active === plan.id ? undefined : book.active;
        return ok({
          book: active === undefined ? { plans } : { plans, active },
          output: `Plan '${plan.id}' has been deleted.`,
        });
      });
  }
}

/** The plan as the model reads it: title, progress, counts by status, then each step with its mark. */
export function renderPlan(plan: Plan): string {
  const heading = `Plan: ${plan.title} (ID: ${plan.id})`;
  const count = (status: StepStatus) => plan.steps.filter((step) => step.status === status).length;
  const steps = plan.steps.flatMap((step, index) => [
    `${index}. ${STEP_MARKS[step.status]} ${step.text}`,
    ...(step.notes ? [`   Notes: ${step.notes}`] : []),
  ]);
  return [
    heading,
    '='.repeat(heading.length),
    '',
    `Progress: ${progress(plan)}`,
    `Status: ${count('completed')} completed, ${count('in_progress')} in progress, ${count('blocked')} blocked, ${count('not_started')} not started`,
    '',
    'Steps:',
    ...steps,
  ].join('\n');
}

function progress(plan: Plan): string {
  const total = plan.steps.length;
  const completed = plan.steps.filter((step) => step.status === 'completed').length;
  const percent = total === 0 ? '0%' : `${((completed / total) * 100).toFixed(1)}%`;
  return `${completed}/${total} steps completed (${percent})`;
}

function create(book: PlanBook, command: PlanningCommand): Result<PlanningOutcome, string> {
  const id = command.plan_id;
  if (!id) return missing('plan_id', 'create');
  if (book.plans[id]) return err(`A plan with ID '${id}' already exists. Use 'update' to change it.`);
  if (!command.title) return missing('title', 'create');
  const steps = command.steps;
  if (steps === undefined) return missing('steps', 'create');
  if (steps.length === 0) return err(emptySteps);
  const plan: Plan = {
    id,
    title: command.title,
    steps: steps.map((text) => ({ text, status: 'not_started', notes: '' })),
  };
  return ok({
    book: { plans: { ...book.plans, [id]: plan }, active: id },
    output: `Plan created successfully with ID: ${id}\n\n${renderPlan(plan)}`,
  });
}

function update(book: PlanBook, command: PlanningCommand): Result<PlanningOutcome, string> {
  const id = command.plan_id;
  if (!id) return missing('plan_id', 'update');
  return withPlan(book, id, (plan) => {
    if (command.steps?.length === 0) return err(emptySteps);
    const updated: Plan = {
      ...plan,
      title: command.title || plan.title,
      // A step keeps its status and notes only while the same text stays at the same place.
      steps:
        command.steps?.map((text, index) =>
          plan.steps[index]?.text === text
            ? (plan.steps[index] as PlanStep)
            : { text, status: 'not_started', notes: '' },
        ) ?? plan.steps,
    };
    return ok({
      book: { ...book, plans: { ...book.plans, [id]: updated } },
      output: `Plan updated successfully: ${id}\n\n${renderPlan(updated)}`,
    });
  });
}

function markStep(book: PlanBook, command: PlanningCommand): Result<PlanningOutcome, string> {
  return withPlan(book, command.plan_id || book.active, (plan) => {
    const index = command.step_index;
    if (index === undefined) return missing('step_index', 'mark_step');
    if (!Number.isInteger(index) || index < 0 || index >= plan.steps.length)
      return err(`Invalid step_index: ${index}. Valid indices range from 0 to ${plan.steps.length - 1}.`);
    const status = command.step_status;
    if (status !== undefined && !STEP_STATUSES.includes(status))
      return err(`Invalid step_status: ${String(status)}. Valid statuses are: ${STEP_STATUSES.join(', ')}`);
    const step = plan.steps[index] as PlanStep;
    const marked: PlanStep = {
      ...step,
      status: status ?? step.status,
      // Empty notes leave the old ones, as OpenManus does.
      notes: command.step_notes || step.notes,
    };
    const updated: Plan = { ...plan, steps: plan.steps.map((old, i) => (i === index ? marked : old)) };
    return ok({
      book: { ...book, plans: { ...book.plans, [plan.id]: updated } },
      output: `Step ${index} updated in plan '${plan.id}'.\n\n${renderPlan(updated)}`,
    });
  });
}

function list(book: PlanBook): string {
  const plans = Object.values(book.plans);
  if (plans.length === 0) return "No plans available. Create a plan with the 'create' command.";
  const lines = plans.map((plan) => {
    const completed = plan.steps.filter((step) => step.status === 'completed').length;
    const active = plan.id === book.active ? ' (active)' : '';
    return `• ${plan.id}${active}: ${plan.title} - ${completed}/${plan.steps.length} steps completed`;
  });
  return ['Available plans:', ...lines].join('\n');
}

/** Runs `then` on the plan `id` names; without an id, the active plan (a clear error if there is none). */
function withPlan(
  book: PlanBook,
  id: string | undefined,
  then: (plan: Plan) => Result<PlanningOutcome, string>,
): Result<PlanningOutcome, string> {
  if (id === undefined) return err('No plan_id given and no active plan. Give a plan_id or set an active plan.');
  const plan = book.plans[id];
  return plan ? then(plan) : err(`No plan found with ID: ${id}`);
}

// Callers treat an empty plan_id or title as missing, as OpenManus does.
const missing = (name: string, command: PlanningCommandName) =>
  err(`Parameter \`${name}\` is required for command: ${command}`);

const emptySteps = 'Parameter `steps` must be a non-empty list of strings.';
