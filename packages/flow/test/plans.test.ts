import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyPlanning,
  emptyPlanBook,
  type Plan,
  type PlanBook,
  type PlanningCommand,
  renderPlan,
  STEP_STATUSES,
  type StepStatus,
} from '../src/plans.js';

/** Applies commands in turn, failing the test on the first error; the last outcome. */
function apply(book: PlanBook, ...commands: PlanningCommand[]) {
  let outcome = { book, output: '' };
  for (const command of commands) {
    const result = applyPlanning(outcome.book, command);
    if (!result.isOk()) throw new Error(`${command.command} failed: ${result.error}`);
    outcome = result.value;
  }
  return outcome;
}

const errorOf = (book: PlanBook, command: PlanningCommand) => {
  const result = applyPlanning(book, command);
  return result.isOk() ? `no error: ${result.value.output}` : result.error;
};

const create = (plan_id: string, steps = ['Search', 'Read', 'Write'], title = `Plan ${plan_id}`): PlanningCommand => ({
  command: 'create',
  plan_id,
  title,
  steps,
});

const trip = apply(emptyPlanBook, create('trip', ['Book flights', 'Pack'], 'Trip to Kyoto')).book;

describe('renderPlan', () => {
  it('renders title, underline, progress, counts and every step with its mark and notes', () => {
    const plan: Plan = {
      id: 'p1',
      title: 'Ship it',
      steps: [
        { text: 'Write code', status: 'completed', notes: 'done in 2h' },
        { text: 'Review', status: 'in_progress', notes: '' },
        { text: 'Deploy', status: 'blocked', notes: 'waiting for CI' },
        { text: 'Announce', status: 'not_started', notes: '' },
      ],
    };
    expect(renderPlan(plan)).toBe(
      [
        'Plan: Ship it (ID: p1)',
        '======================',
        '',
        'Progress: 1/4 steps completed (25.0%)',
        'Status: 1 completed, 1 in progress, 1 blocked, 1 not started',
        '',
        'Steps:',
        '0. [✓] Write code',
        '   Notes: done in 2h',
        '1. [→] Review',
        '2. [!] Deploy',
        '   Notes: waiting for CI',
        '3. [ ] Announce',
      ].join('\n'),
    );
  });

  it('rounds the percentage to one decimal, and says 0% for a plan without steps', () => {
    const steps = (statuses: StepStatus[]) => statuses.map((status, i) => ({ text: `s${i}`, status, notes: '' }));
    const third = renderPlan({ id: 'x', title: 't', steps: steps(['completed', 'not_started', 'blocked']) });
    expect(third).toContain('Progress: 1/3 steps completed (33.3%)\n');
    expect(renderPlan({ id: 'x', title: 't', steps: [] })).toContain('Progress: 0/0 steps completed (0%)\n');
  });

  it('underlines the heading to its exact length', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (id, title) => {
        const [heading = '', underline = ''] = renderPlan({ id, title, steps: [] }).split('\n');
        expect(underline).toBe('='.repeat(heading.length));
      }),
    );
  });
});

describe('create', () => {
  it('adds the plan with every step not started, makes it active, and shows it', () => {
    const { book, output } = apply(trip, create('work', ['A', 'B'], 'Work'));
    expect(book.active).toBe('work');
    expect(book.plans.work).toEqual({
      id: 'work',
      title: 'Work',
      steps: [
        { text: 'A', status: 'not_started', notes: '' },
        { text: 'B', status: 'not_started', notes: '' },
      ],
    });
    expect(book.plans.trip).toBe(trip.plans.trip);
    expect(output).toBe(`Plan created successfully with ID: work\n\n${renderPlan(book.plans.work as Plan)}`);
  });

  it('refuses an existing id, and a missing id, title or steps, leaving the book as it was', () => {
    expect(errorOf(trip, create('trip'))).toBe("A plan with ID 'trip' already exists. Use 'update' to change it.");
    expect(errorOf(trip, { command: 'create', title: 'T', steps: ['a'] })).toBe(
      'Parameter `plan_id` is required for command: create',
    );
    expect(errorOf(trip, { command: 'create', plan_id: '', title: 'T', steps: ['a'] })).toBe(
      'Parameter `plan_id` is required for command: create',
    );
    expect(errorOf(trip, { command: 'create', plan_id: 'n', steps: ['a'] })).toBe(
      'Parameter `title` is required for command: create',
    );
    expect(errorOf(trip, { command: 'create', plan_id: 'n', title: '', steps: ['a'] })).toBe(
      'Parameter `title` is required for command: create',
    );
    expect(errorOf(trip, { command: 'create', plan_id: 'n', title: 'T' })).toBe(
      'Parameter `steps` is required for command: create',
    );
    expect(errorOf(trip, { command: 'create', plan_id: 'n', title: 'T', steps: [] })).toBe(
      'Parameter `steps` must be a non-empty list of strings.',
    );
  });
});

describe('update', () => {
  const marked = apply(
    emptyPlanBook,
    create('p', ['A', 'B', 'C']),
    { command: 'mark_step', step_index: 0, step_status: 'completed', step_notes: 'a note' },
    { command: 'mark_step', step_index: 1, step_status: 'blocked', step_notes: 'b note' },
    { command: 'mark_step', step_index: 2, step_status: 'in_progress' },
  ).book;

  it('keeps a step status and notes only where the same text stays at the same index', () => {
    const { book, output } = apply(marked, { command: 'update', plan_id: 'p', steps: ['A', 'C', 'B', 'D'] });
    expect(book.plans.p?.steps).toEqual([
      { text: 'A', status: 'completed', notes: 'a note' },
      { text: 'C', status: 'not_started', notes: '' },
      { text: 'B', status: 'not_started', notes: '' },
      { text: 'D', status: 'not_started', notes: '' },
    ]);
    expect(output).toBe(`Plan updated successfully: p\n\n${renderPlan(book.plans.p as Plan)}`);
  });

  it('changes the title alone, keeping the steps, and does not change the active plan', () => {
    const book = apply(marked, create('other'), { command: 'update', plan_id: 'p', title: 'Renamed' }).book;
    expect(book.plans.p).toEqual({ ...marked.plans.p, title: 'Renamed' });
    expect(book.active).toBe('other');
  });

  it('refuses a missing or unknown plan, and an empty list of steps', () => {
    expect(errorOf(marked, { command: 'update', steps: ['A'] })).toBe(
      'Parameter `plan_id` is required for command: update',
    );
    expect(errorOf(marked, { command: 'update', plan_id: 'nope' })).toBe('No plan found with ID: nope');
    expect(errorOf(marked, { command: 'update', plan_id: 'p', steps: [] })).toBe(
      'Parameter `steps` must be a non-empty list of strings.',
    );
  });

  it('with the same steps, keeps every status and note (property)', () => {
    const status = fc.constantFrom(...STEP_STATUSES);
    fc.assert(
      fc.property(
        fc.array(fc.record({ text: fc.string(), status, notes: fc.string() }), { minLength: 1, maxLength: 8 }),
        (steps) => {
          const book: PlanBook = { plans: { p: { id: 'p', title: 't', steps } }, active: 'p' };
          const updated = apply(book, { command: 'update', plan_id: 'p', steps: steps.map((s) => s.text) }).book;
          expect(updated).toEqual(book);
        },
      ),
    );
  });

  it('resets exactly the steps whose text changed at their index (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 6 }),
        fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 6 }),
        (before, after) => {
          const steps = before.map((text) => ({ text, status: 'completed' as const, notes: 'n' }));
          const book: PlanBook = { plans: { p: { id: 'p', title: 't', steps } } };
          const updated = apply(book, { command: 'update', plan_id: 'p', steps: after }).book.plans.p;
          expect(updated?.steps.map((s) => s.text)).toEqual(after);
          after.forEach((text, i) => {
            expect(updated?.steps[i]?.status).toBe(before[i] === text ? 'completed' : 'not_started');
            expect(updated?.steps[i]?.notes).toBe(before[i] === text ? 'n' : '');
          });
        },
      ),
    );
  });
});

describe('list', () => {
  it('lists every plan with its progress, marking the active one', () => {
    const { book } = apply(trip, create('work', ['A', 'B', 'C']), {
      command: 'mark_step',
      step_index: 1,
      step_status: 'completed',
    });
    expect(apply(book, { command: 'list' })).toEqual({
      book,
      output: [
        'Available plans:',
        '• trip: Trip to Kyoto - 0/2 steps completed',
        '• work (active): Plan work - 1/3 steps completed',
      ].join('\n'),
    });
  });

  it('says there are no plans yet', () => {
    expect(apply(emptyPlanBook, { command: 'list' }).output).toBe(
      "No plans available. Create a plan with the 'create' command.",
    );
  });
});

describe('get', () => {
  const two = apply(trip, create('work')).book;

  it('shows the named plan, or the active one, changing nothing', () => {
    expect(apply(two, { command: 'get', plan_id: 'trip' })).toEqual({
      book: two,
      output: renderPlan(two.plans.trip as Plan),
    });
    expect(apply(two, { command: 'get' }).output).toBe(renderPlan(two.plans.work as Plan));
  });

  it('refuses an unknown plan, and a call without plan_id when no plan is active', () => {
    expect(errorOf(two, { command: 'get', plan_id: 'nope' })).toBe('No plan found with ID: nope');
    expect(errorOf(emptyPlanBook, { command: 'get' })).toBe(
      'No plan_id given and no active plan. Give a plan_id or set an active plan.',
    );
  });
});

describe('set_active', () => {
  it('makes the plan active and shows it', () => {
    const two = apply(trip, create('work')).book;
    const { book, output } = apply(two, { command: 'set_active', plan_id: 'trip' });
    expect(book).toEqual({ ...two, active: 'trip' });
    expect(output).toBe(`Plan 'trip' is now the active plan.\n\n${renderPlan(two.plans.trip as Plan)}`);
  });

  it('refuses a missing or unknown plan', () => {
    expect(errorOf(trip, { command: 'set_active' })).toBe('Parameter `plan_id` is required for command: set_active');
    expect(errorOf(trip, { command: 'set_active', plan_id: 'nope' })).toBe('No plan found with ID: nope');
  });
});

describe('mark_step', () => {
  it('sets the status and notes of a step of the active plan, and shows the plan', () => {
    const { book, output } = apply(trip, {
      command: 'mark_step',
      step_index: 1,
      step_status: 'in_progress',
      step_notes: 'socks',
    });
    expect(book.plans.trip?.steps).toEqual([
      { text: 'Book flights', status: 'not_started', notes: '' },
      { text: 'Pack', status: 'in_progress', notes: 'socks' },
    ]);
    expect(output).toBe(`Step 1 updated in plan 'trip'.\n\n${renderPlan(book.plans.trip as Plan)}`);
  });

  it('marks a named plan that is not active, leaving the active one', () => {
    const two = apply(trip, create('work', ['A'])).book;
    const { book } = apply(two, { command: 'mark_step', plan_id: 'trip', step_index: 0, step_status: 'completed' });
    expect(book.plans.trip?.steps[0]?.status).toBe('completed');
    expect(book.plans.work).toBe(two.plans.work);
    expect(book.active).toBe('work');
  });

  it('writes notes only when they are non-empty, and keeps the status when none is given', () => {
    const noted = apply(trip, { command: 'mark_step', step_index: 0, step_status: 'blocked', step_notes: 'visa' }).book;
    const { book } = apply(noted, { command: 'mark_step', step_index: 0, step_notes: '' });
    expect(book.plans.trip?.steps[0]).toEqual({ text: 'Book flights', status: 'blocked', notes: 'visa' });
    const renoted = apply(book, { command: 'mark_step', step_index: 0, step_notes: 'got it' }).book;
    expect(renoted.plans.trip?.steps[0]).toEqual({ text: 'Book flights', status: 'blocked', notes: 'got it' });
  });

  it('refuses a missing, negative, out-of-range or fractional index and an unknown status', () => {
    const range = 'Valid indices range from 0 to 1.';
    expect(errorOf(trip, { command: 'mark_step', step_status: 'completed' })).toBe(
      'Parameter `step_index` is required for command: mark_step',
    );
    expect(errorOf(trip, { command: 'mark_step', step_index: 2 })).toBe(`Invalid step_index: 2. ${range}`);
    expect(errorOf(trip, { command: 'mark_step', step_index: -1 })).toBe(`Invalid step_index: -1. ${range}`);
    expect(errorOf(trip, { command: 'mark_step', step_index: 0.5 })).toBe(`Invalid step_index: 0.5. ${range}`);
    const done = { command: 'mark_step', step_index: 0, step_status: 'done' } as unknown as PlanningCommand;
    expect(errorOf(trip, done)).toBe(
      'Invalid step_status: done. Valid statuses are: not_started, in_progress, completed, blocked',
    );
  });

  it('refuses an unknown plan, and a call without plan_id when no plan is active', () => {
    expect(errorOf(trip, { command: 'mark_step', plan_id: 'nope', step_index: 0 })).toBe('No plan found with ID: nope');
    expect(errorOf(emptyPlanBook, { command: 'mark_step', step_index: 0 })).toBe(
      'No plan_id given and no active plan. Give a plan_id or set an active plan.',
    );
  });
});

describe('delete', () => {
  it('removes the plan and clears the active plan when it was the active one', () => {
    const two = apply(trip, create('work')).book;
    const { book, output } = apply(two, { command: 'delete', plan_id: 'work' });
    expect(book).toEqual({ plans: { trip: two.plans.trip } });
    expect(output).toBe("Plan 'work' has been deleted.");
    expect(errorOf(book, { command: 'get' })).toContain('no active plan');
  });

  it('keeps the active plan when another one is deleted', () => {
    const two = apply(trip, create('work')).book;
    expect(apply(two, { command: 'delete', plan_id: 'trip' }).book).toEqual({
      plans: { work: two.plans.work },
      active: 'work',
    });
  });

  it('refuses a missing or unknown plan', () => {
    expect(errorOf(trip, { command: 'delete' })).toBe('Parameter `plan_id` is required for command: delete');
    expect(errorOf(trip, { command: 'delete', plan_id: 'nope' })).toBe('No plan found with ID: nope');
  });
});
