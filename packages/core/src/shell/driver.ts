/**
 * The one loop that awaits, for any reducer: effects out of `step` go to the performer for
 * their type, the events performers answer with go back into `step`, one at a time and in
 * arrival order, each transition announced and saved before the next. Agent runs, flows and
 * durable runs are all this driver with different machines and performers.
 */

import { runErrorOf } from '../errors.js';
import type { RunError } from '../kernel/runError.js';

/** A reducer and the few events the driver itself needs from it. */
export interface Machine<S, E, F extends { readonly type: string }> {
  readonly step: (state: S, event: E) => readonly [S, readonly F[]];
  readonly isFinal: (state: S) => boolean;
  /** The event that ends the run when its signal aborts. */
  readonly cancelled: (reason: string) => E;
  /** The event that ends the run when the shell cannot go on (an effect nobody performs). */
  readonly faulted: (error: RunError) => E;
}

/** The run as seen from outside the loop: its signal, its state now, and a way to feed it an event. */
export interface DriverControl<S, E> {
  readonly signal: AbortSignal;
  state(): S;
  /** Ignored once the run has ended. */
  dispatch(event: E): Promise<void>;
}

/** What a performer may use besides its effect. */
export interface PerformContext<S, E> {
  /** Aborted when the run is cancelled or has ended: stop the work. */
  readonly signal: AbortSignal;
  /** The effects that came out of the same transition as this one (to decide on running them together). */
  readonly batch: readonly { readonly type: string }[];
  /** The run's state now. */
  state(): S;
  /** Feeds an event to the run (progress of long work, a changed tool list); ignored once the run has ended. */
  dispatch(event: E): Promise<void>;
}

/**
 * Performs one effect. Returns the event that answers it, or `undefined` when the answer
 * comes later from outside (a person): then the run pauses once nothing else is in flight.
 */
export type Performer<S, E, F> = (effect: F, context: PerformContext<S, E>) => E | undefined | Promise<E | undefined>;

export type Performers<S, E, F extends { readonly type: string }> = {
  readonly [K in F['type']]?: Performer<S, E, Extract<F, { type: K }>>;
};

/** What the driver announces itself; performers announce the rest (observations) through their own means. */
export type DriverItem<S, E, F> =
  | { readonly type: 'effect'; readonly effect: F }
  | { readonly type: 'event'; readonly event: E; readonly state: S };

export interface DriveOptions<S, E, F extends { readonly type: string }> {
  readonly machine: Machine<S, E, F>;
  readonly performers: Performers<S, E, F>;
  readonly signal?: AbortSignal;
  /** Every transition, before the next one is applied; a promise here slows the run (a bounded stream). */
  readonly announce?: (item: DriverItem<S, E, F>) => void | Promise<void>;
  /** Which effects are notes rather than work: performed, but not announced as effect items. */
  readonly quiet?: (effect: F) => boolean;
  /** Called once at the start with a handle for work that outlives one effect (a resource changing the tools). */
  readonly attach?: (control: DriverControl<S, E>) => void;
  /** Persists every state (checkpoint); a failure ends the run as faulted, unsaved. */
  readonly save?: (state: S) => void | Promise<void>;
}

export interface Driven<S> {
  readonly state: S;
  /** Set when the run ended because the shell could not go on. */
  readonly fault?: RunError;
}

/**
 * Runs `first` and everything it leads to until the machine is final, nothing is left in
 * flight (a pause), or the signal aborts. Once this resolves, nothing it started can change
 * the state or save it again.
 */
export async function drive<S, E, F extends { readonly type: string }>(
  options: DriveOptions<S, E, F>,
  from: S,
  first: E,
): Promise<Driven<S>> {
  const { machine, performers } = options;
  const run = new AbortController();
  let state = from;
  let fault: RunError | undefined;
  let closed = false;
  let inFlight = 0;
  let queued = 0;
  let applying: Promise<void> = Promise.resolve();
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  // Nothing in flight and no event waiting to be applied: the run is over or paused.
  const checkIdle = () => {
    if (inFlight === 0 && queued === 0) settle();
  };

  const current = () => state;
  const dispatch = (event: E) => apply(event);
  options.attach?.({ signal: run.signal, state: current, dispatch });
  const context = (batch: readonly F[]): PerformContext<S, E> => ({
    signal: run.signal,
    batch,
    state: current,
    dispatch,
  });

  const perform = (effect: F, batch: readonly F[]) => {
    const performer = performers[effect.type as F['type']] as Performer<S, E, F> | undefined;
    if (!performer) {
      void apply(machine.faulted({ code: 'NO_PERFORMER', message: `no performer for effect "${effect.type}"` }));
      return;
    }
    const fail = (error: unknown) =>
      apply(machine.faulted(runErrorOf(error, 'PERFORMER_THREW', `the ${effect.type} performer threw: `)));
    let answer: E | undefined | Promise<E | undefined>;
    try {
      // Called synchronously, so notes (observations) are announced in the order they were emitted.
      answer = performer(effect, context(batch));
    } catch (error) {
      void fail(error);
      return;
    }
    if (!(answer instanceof Promise)) {
      if (answer !== undefined) void apply(answer);
      return;
    }
    inFlight++;
    answer.then(
      (event) => {
        inFlight--;
        if (event !== undefined) void apply(event);
        checkIdle();
      },
      (error: unknown) => {
        inFlight--;
        void fail(error);
        checkIdle();
      },
    );
  };

  // Transitions apply one at a time, in arrival order, each announced and saved before the next.
  // One that needs no waiting (no promise from the host, no store) applies without a further turn
  // of the microtask queue: most of a run's transitions are such.
  function apply(event: E): Promise<void> {
    queued++;
    applying = applying.then(() => {
      let pending: Promise<void> | undefined;
      try {
        pending = transition(event);
      } catch (error) {
        return shellFailed(error);
      }
      return pending ? pending.then(applied, shellFailed) : applied();
    });
    return applying;
  }

  function applied(): void {
    queued--;
    checkIdle();
  }

  // A host callback (an emitter listener, a checkpoint hook) threw past its guard: stop here.
  function shellFailed(error: unknown): void {
    fault = runErrorOf(error, 'INTERNAL', "the run's shell failed: ");
    closed = true;
    run.abort(new Error(fault.message));
    settle();
  }

  function transition(event: E): Promise<void> | undefined {
    if (closed) return undefined;
    let next: S;
    let effects: readonly F[];
    try {
      [next, effects] = machine.step(state, event);
    } catch (error) {
      const rejected = runErrorOf(error, 'REDUCER_REJECTED', 'the reducer rejected an event: ');
      [next, effects] = machine.step(state, machine.faulted(rejected));
    }
    state = next;
    const told = options.announce?.({ type: 'event', event, state });
    if (told || options.save) return savedThenPerformed(told, effects);
    endIfFinal();
    return performEffects(effects, 0);
  }

  async function savedThenPerformed(told: Promise<void> | void, effects: readonly F[]): Promise<void> {
    if (told) await told;
    if (options.save) {
      try {
        await options.save(state);
      } catch (error) {
        fault = runErrorOf(error, 'CHECKPOINT_FAILED', 'could not save a checkpoint: ');
        state = machine.step(state, machine.faulted(fault))[0];
        closed = true;
        await options.announce?.({ type: 'event', event: machine.faulted(fault), state });
        run.abort(new Error(fault.message));
        settle();
        return;
      }
    }
    endIfFinal();
    await performEffects(effects, 0);
  }

  function endIfFinal(): void {
    if (!machine.isFinal(state)) return;
    closed = true;
    run.abort(runEnded());
    settle();
  }

  // Each effect announced (waited for when the host returns a promise), then performed, in order.
  function performEffects(effects: readonly F[], from: number): Promise<void> | undefined {
    for (let i = from; i < effects.length; i++) {
      const effect = effects[i] as F;
      const told = options.quiet?.(effect) ? undefined : options.announce?.({ type: 'effect', effect });
      if (told) return told.then(() => (started(effect, effects) ? performEffects(effects, i + 1) : undefined));
      if (!started(effect, effects)) return undefined;
    }
    return undefined;
  }

  // An effect is not started once the run was cancelled, unless the machine ended (its finish).
  function started(effect: F, batch: readonly F[]): boolean {
    if (run.signal.aborted && !machine.isFinal(state)) return false;
    perform(effect, batch);
    return true;
  }

  // Cancelling is queued behind what has already arrived; anything later meets a final state.
  const onAbort = () => {
    run.abort(options.signal?.reason);
    void apply(machine.cancelled(reasonOf(run.signal)));
  };
  try {
    void apply(first);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    await applying;
    checkIdle();
    await settled;
    await applying;
  } finally {
    closed = true;
    if (!run.signal.aborted) run.abort(runEnded());
    options.signal?.removeEventListener('abort', onAbort);
  }
  return fault ? { state, fault } : { state };
}

// One reason for every run that ended: an Error records a stack trace when it is made, which
// costs tens of microseconds at the end of each run (measured), for a reason nobody traces.
let endedReason: Error | undefined;
const runEnded = (): Error => {
  if (!endedReason) endedReason = new Error('the run has ended');
  return endedReason;
};

function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  return typeof reason === 'string' ? reason : 'the run was cancelled';
}
