import {
  type Agent,
  type AgentPerformer,
  type AgentState,
  type AnyEvent,
  createRunEmitter,
  type HostAnswer,
  type PendingInput,
  type RunOutcome,
  resume,
  resumeWith,
  run,
  type StartOptions,
  type Usage,
} from '@openmanus/core';
import { pendingInputs } from '@openmanus/core/kernel';
import { type AnswerCheck, answerBySignal, answersBySignal } from './hostAnswers.js';
import { recordedPerformers } from './recordedPerformers.js';
import type { DurableRuntime } from './runtime.js';

/** What a run publishes after every transition (key `progress`): small, whatever the history's length. */
export interface RunProgress {
  readonly status: AgentState['status'];
  readonly step: number;
  readonly usage: Usage;
  /** What the run waits for from people: answer with `DurableClient.answer`. */
  readonly pending: readonly PendingInput[];
}

/** One transition of the run as observers read it (stream `events`): the event, and the run's progress after it. */
export interface RunEventItem {
  readonly event: AnyEvent;
  readonly status: AgentState['status'];
  readonly step: number;
  readonly usage: Usage;
}

/**
 * Options of a durable run: core's, less what the durable run owns (the id, the performers,
 * checkpoints, items, and people's answers, which come as messages to the run). `state` gives a
 * new task (`start` a string) a conversation to continue: a flow executor's memory. A tool's form
 * for a person and its requests for the model (`scope.elicit`, `scope.sample`) are answered within
 * its call, a recorded step, and cannot wait for a message: `onElicitation` and `onSampling`
 * answer them. Without them a tool's form is cancelled and a request refused. A tool that pauses
 * on a person (an MCP server's form, an agent tool's child waiting for an approval) waits for a
 * message as a question does.
 */
export interface DurableRunOptions
  extends Omit<
    StartOptions,
    'runId' | 'performers' | 'checkpoint' | 'store' | 'emitter' | 'onHuman' | 'onApproval' | 'image'
  > {
  /** How long the run waits for a person's answer before it pauses (default 7 days). */
  readonly answerTimeoutMs?: number;
  /**
   * What makes a message to the run a person's answer. A worker takes only decisions signed with
   * its key (`decisionKey`); without a check, a message is taken as sent, for a host of its own
   * that authenticates answers before they reach the run.
   */
  readonly checkAnswer?: AnswerCheck;
  /**
   * Model turns one part of the run takes before it continues as a fresh part from its state
   * (continue-as-new), so a replay after a crash never goes back further (default 50). A change
   * replays differently: bump the application version with it.
   */
  readonly continueEvery?: number;
}

/** How one part of a durable run ended: with the run's outcome, or handing the run on from `state`. */
export type DurableRunEnd =
  | { readonly type: 'ended'; readonly outcome: RunOutcome }
  | { readonly type: 'continued'; readonly state: AgentState };

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Core's agent run (the same driver, reducer and performers as `run`) inside a durable runtime:
 * every model, tool and context call is a recorded step keyed by its effect id, and after each
 * transition the event is streamed (`events`) and the progress published (`progress`). Call it
 * from the engine's workflow body, with the task (`input`) or the state a part before handed on
 * (resumed where it stopped: `options.state` is for a new task only);
 * after a crash the engine calls it again and it replays to where it stopped. A tool paused on a
 * person (its pending input `<call's effect id>/<its own>`) is waited for as a question is, and
 * the call goes on with the answer (`resumeWith`). Once the part has taken `continueEvery` model
 * turns it ends `continued` at the next model call, nothing in flight, for the caller to start
 * the next part from that state.
 */
export async function durableRun(
  runtime: DurableRuntime,
  agent: Agent,
  start: string | AgentState,
  options: DurableRunOptions,
): Promise<DurableRunEnd> {
  const { answerTimeoutMs = WEEK_MS, continueEvery = 50, checkAnswer, signal, ...runOptions } = options;
  if (!Number.isInteger(continueEvery) || continueEvery < 1)
    throw new RangeError(`continueEvery must be a positive whole number, got ${continueEvery}`);
  const recorded = recordedPerformers(runtime, agent);
  const answers = answersBySignal(runtime, answerTimeoutMs, checkAnswer);
  // Steps count from 1 in a new run; a continued part's first model call is its state's step.
  const lastStep = (typeof start === 'string' ? 1 : start.step) + continueEvery - 1;
  let handedOver = false;
  // The event of the transition being saved: the checkpoint writes it, in the transition's turn,
  // so the writes come in the same order on every replay.
  let applied: AnyEvent | undefined;
  const emitter = createRunEmitter();
  emitter.on('event', (item) => {
    applied = item.event;
  });
  const signals = [signal, runtime.cancelled].filter((s): s is AbortSignal => s !== undefined);
  const coreOptions: StartOptions = {
    ...runOptions,
    runId: runtime.runId,
    emitter,
    ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
    performers: (defaults) => {
      const performers = { ...recorded(defaults), ...answers };
      const callLlm: AgentPerformer<'callLlm'> = (effect, context) => {
        // Past the part's last step, the model call is left to the next part: nothing else is in
        // flight at a model call, so the run stops here with that call pending.
        if (context.state().step <= lastStep) return performers.callLlm(effect, context);
        handedOver = true;
        return undefined;
      };
      return { ...performers, callLlm };
    },
    checkpoint: async (state) => {
      const { status, step, usage } = state;
      // A continued part's `resumed` changes nothing observers have not seen.
      if (applied && applied.type !== 'resumed')
        await runtime.stream('events', { event: applied, status, step, usage } satisfies RunEventItem);
      const pending = pendingInputs(agent.config, state);
      await runtime.publish('progress', { status, step, usage, pending } satisfies RunProgress);
    },
  };
  let outcome =
    typeof start === 'string' ? await run(agent, start, coreOptions) : await resume(agent, start, coreOptions);
  for (;;) {
    if (handedOver && outcome.status === 'awaiting_llm') return { type: 'continued', state: outcome.state };
    // A tool paused on a person is no effect a performer waits on: the run waits for the answer
    // here, then goes on with it (in the pending inputs' order, the same on every replay).
    const input = awaitedInTool(outcome.pending);
    if (!input) return { type: 'ended', outcome };
    const answer = await answerBySignal(runtime, input.effectId, answerTimeoutMs, checkAnswer);
    // No answer in time, or one of another kind (the first decision about an input stands): paused.
    if (!answer || ANSWER_KINDS[answer.type] !== input.kind) return { type: 'ended', outcome };
    outcome = await resumeWith(agent, outcome.state, answer, coreOptions);
  }
}

const ANSWER_KINDS: Readonly<Record<HostAnswer['type'], PendingInput['kind']>> = {
  humanReplied: 'human',
  approvalGiven: 'approval',
  approvalDenied: 'approval',
};

/**
 * The input to wait for when the run paused only on tools paused on people (their inputs' ids are
 * `<call's effect id>/<the tool's own>`). A question or an approval of a call was waited for by
 * its performer already: it is pending only when that wait ran out, and the run stays paused.
 */
const awaitedInTool = (pending: readonly PendingInput[]): PendingInput | undefined =>
  pending.every((input) => input.effectId.includes('/')) ? pending[0] : undefined;
