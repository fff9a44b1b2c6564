import { type Plan, STEP_MARKS, type StepStatus } from '@openmanus/flow';
import { paint, preview } from './progress.js';

export interface PlanViewOptions {
  readonly color: boolean;
  /** The terminal's width: every line then fits on one row, so that the view can be redrawn in place. */
  readonly width?: number;
}

/** The colour of each status's mark (the marks are `renderPlan`'s) on a terminal. */
const COLORS: Record<StepStatus, number> = { not_started: 2, in_progress: 36, completed: 32, blocked: 31 };

/** Longest notes shown in a log, where lines need not fit a terminal. */
const NOTES_CHARS = 300;

/**
 * The plan as a person follows it: title, progress, each step with its mark, and a step's notes
 * (why it is blocked). One string per line, each on one row; pure, so the live view only decides
 * where it goes.
 */
export function planView(plan: Plan, { color, width }: PlanViewOptions): readonly string[] {
  // Text after a lead of `used` characters: on one line, cut to what is left of the row.
  const fit = (text: string, used: number, most = Number.POSITIVE_INFINITY) =>
    preview(text, width === undefined ? most : Math.max(1, Math.min(most, width - 1 - used)));
  const done = plan.steps.filter((step) => step.status === 'completed').length;
  const blocked = plan.steps.filter((step) => step.status === 'blocked').length;
  const total = plan.steps.length;
  const percent = total === 0 ? 0 : Math.round((done / total) * 100);
  const progress = `${done}/${total} steps completed (${percent}%)${blocked ? `, ${blocked} blocked` : ''}`;
  return [
    paint(color, 1)(`Plan: ${fit(plan.title, 6)}`),
    `Progress: ${fit(progress, 10)}`,
    ...plan.steps.flatMap((step, index) => {
      const mark = STEP_MARKS[step.status];
      const code = COLORS[step.status];
      const lead = `  ${index}. `;
      const stepLine = `${lead}${paint(color, code)(mark)} ${fit(step.text, lead.length + mark.length + 1)}`;
      if (!step.notes) return [stepLine];
      // Under the step's text.
      const indent = `${' '.repeat(lead.length + mark.length + 1)}notes: `;
      return [stepLine, indent + paint(color, 2)(fit(step.notes, indent.length, NOTES_CHARS))];
    }),
  ];
}
