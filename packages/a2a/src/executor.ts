import { type Artifact, type Part, TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import {
  type Agent,
  type AgentState,
  CheckpointConflictError,
  type CheckpointStore,
  isFinal,
  type LlmPort,
  messageOf,
  type RunItem,
  type RunOptions,
  type RunOutcome,
  restore,
  step,
  stream,
  streamResume,
  streamResumeWith,
} from '@openmanus/core';
import { pendingInputs } from '@openmanus/core/kernel';
import { changedFiles } from './files.js';
import { answerOf, askingParts } from './inputs.js';
import { agentMessage, artifact, dataPart, status, textOf, textPart } from './parts.js';
import { ANSWER_ARTIFACT, contextOf, type TaskFields } from './tasks.js';

/** Options every leg of every run gets, besides those the executor sets. */
export type A2aRunOptions = Omit<RunOptions, 'llm' | 'runId' | 'store' | 'signal' | 'approvals' | 'emitter'>;

export interface ExecutorOptions {
  /** The agent, with the host's approval rules applied. */
  readonly agent: Agent;
  readonly llm: LlmPort;
  /** The host's store, saving with each run the fields `fields` holds for its task. */
  readonly store: CheckpointStore;
  readonly runOptions: A2aRunOptions;
  /** The fields of the tasks whose runs are being saved (a leg in flight, a cancellation). */
  readonly fields: Map<string, TaskFields>;
}

/** A leg of a run in flight here: from a start or an answer to its end or next pause. */
interface Leg {
  readonly controller: AbortController;
  readonly done: Promise<void>;
}

const CANCEL_REASON = 'cancelled by the A2A client';
/** How much of a tool's output a progress message carries. */
const OUTPUT_SHOWN = 2000;

const clip = (text: string) => (text.length > OUTPUT_SHOWN ? `${text.slice(0, OUTPUT_SHOWN)}…` : text);

/**
 * Runs our agent for the SDK: a task is a run (its id the run's id, checkpointed in the host's
 * store); a message on a task waiting for input answers it; every run item of note becomes a
 * status message; the answer and the files the run wrote become artifacts.
 */
export class RunExecutor implements AgentExecutor {
  private readonly live = new Map<string, Leg>();
  /** When each task's run began here: files changed since then are its artifacts. */
  private readonly began = new Map<string, number>();

  constructor(private readonly options: ExecutorOptions) {}

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, task } = context;
    const message = context.userMessage;
    const tell = this.speaker(taskId, contextId, bus);
    const say = tell.say;
    if (!task) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(TaskState.TASK_STATE_SUBMITTED),
          history: [message],
          artifacts: [],
          metadata: {},
        }),
      );
      const text = textOf(message);
      if (!text) return say(TaskState.TASK_STATE_REJECTED, [textPart('Send the task as text.')]);
      return this.leg(taskId, contextId, tell, (options) => stream(this.options.agent, text, options));
    }
    // The server refuses a message on a task that is working; one that came in with another (two
    // answers at once) waits for that one's leg, then finds the run where it left it.
    await this.live.get(taskId)?.done;
    bus.publish(AgentEvent.task(task));
    const stored = await this.options.store.load(taskId);
    if (!stored) return say(TaskState.TASK_STATE_FAILED, [textPart(`No run of task ${taskId} is kept here.`)]);
    const state = await restore(stored.state);
    const waiting = pendingInputs(this.options.agent.config, state);
    if (waiting[0]) {
      const answer = answerOf(message, waiting);
      if (!answer)
        return say(TaskState.TASK_STATE_INPUT_REQUIRED, [
          textPart('That does not answer what the task waits for.'),
          ...askingParts(waiting[0]),
        ]);
      return this.leg(taskId, contextId, tell, (options) =>
        streamResumeWith(this.options.agent, taskId, answer, options),
      );
    }
    if (isFinal(state)) return this.ended(taskId, tell, endingOf(state));
    // A run that stopped mid-way (its server went down): it goes on from its last checkpoint.
    say(TaskState.TASK_STATE_WORKING, [
      textPart('The run had stopped before its end: it goes on from its last checkpoint (this message is not for it).'),
    ]);
    return this.leg(taskId, contextId, tell, (options) => streamResume(this.options.agent, taskId, options));
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const running = this.live.get(taskId);
    if (running) {
      running.controller.abort(CANCEL_REASON);
      // The leg ends as cancelled and says so on this bus.
      return running.done;
    }
    const contextId = await this.cancelStored(taskId);
    this.speaker(taskId, contextId, bus).say(TaskState.TASK_STATE_CANCELED, [textPart('Cancelled.')]);
  };

  /**
   * Records a run that is not in flight here as cancelled (a compare-and-set on its version); a
   * run in flight is stopped. Resolves with the task's context.
   */
  async cancelStored(taskId: string): Promise<string> {
    const running = this.live.get(taskId);
    if (running) {
      running.controller.abort(CANCEL_REASON);
      await running.done;
    }
    const { agent, store, fields } = this.options;
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await store.load(taskId);
      if (!stored) return taskId;
      const contextId = contextOf(taskId, stored.state);
      const state = await restore(stored.state);
      if (isFinal(state)) return contextId;
      const [next] = (agent.step ?? step)(agent.config, state, { type: 'cancelled', reason: CANCEL_REASON });
      fields.set(taskId, { contextId });
      try {
        await store.save(taskId, next, stored.version);
        return contextId;
      } catch (error) {
        if (!(error instanceof CheckpointConflictError)) throw error;
      } finally {
        fields.delete(taskId);
      }
    }
    throw new Error(`task ${taskId} kept changing while it was being cancelled`);
  }

  /** Whether a leg of the task's run is in flight here. */
  working(taskId: string): boolean {
    return this.live.has(taskId);
  }

  /** Resolves once no leg is in flight. */
  async idle(): Promise<void> {
    while (this.live.size > 0) await Promise.all([...this.live.values()].map((leg) => leg.done));
  }

  private speaker(taskId: string, contextId: string, bus: ExecutionEventBus): Teller {
    return {
      say: (state, parts) =>
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: status(state, parts && agentMessage(taskId, contextId, parts)),
            metadata: {},
          }),
        ),
      give: (output) =>
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: output,
            append: false,
            lastChunk: true,
            metadata: {},
          }),
        ),
    };
  }

  /** Runs one leg of the task's run, telling the client how it goes and how it ends. */
  private async leg(
    taskId: string,
    contextId: string,
    tell: Teller,
    start: (options: RunOptions) => AsyncIterable<RunItem>,
  ): Promise<void> {
    const controller = new AbortController();
    let finished: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      finished = resolve;
    });
    this.live.set(taskId, { controller, done });
    // What the store keeps beside the run's state while this leg saves it.
    this.options.fields.set(taskId, { contextId });
    if (!this.began.has(taskId)) this.began.set(taskId, Date.now());
    tell.say(TaskState.TASK_STATE_WORKING);
    const tools = new Map<string, string>();
    try {
      const { llm, store, runOptions } = this.options;
      let outcome: RunOutcome | undefined;
      for await (const item of start({ ...runOptions, llm, store, runId: taskId, signal: controller.signal })) {
        // A child agent's items stay inside its tool call.
        if (item.origin) continue;
        if (item.type === 'result') outcome = item.result;
        const progress = progressOf(item, tools);
        if (progress) tell.say(TaskState.TASK_STATE_WORKING, progress);
      }
      if (!outcome) throw new Error('the run ended without a result');
      await this.ended(taskId, tell, outcome);
    } catch (error) {
      tell.say(TaskState.TASK_STATE_FAILED, [textPart(`The run stopped: ${messageOf(error)}`)]);
    } finally {
      this.live.delete(taskId);
      this.options.fields.delete(taskId);
      finished();
    }
  }

  /** How the run ended, told as the task's last status (after its artifacts, when it finished). */
  private async ended(taskId: string, tell: Teller, outcome: Ending): Promise<void> {
    const waiting = outcome.pending[0];
    if (waiting) return tell.say(TaskState.TASK_STATE_INPUT_REQUIRED, askingParts(waiting));
    const since = this.began.get(taskId);
    this.began.delete(taskId);
    if (outcome.status === 'failed')
      return tell.say(TaskState.TASK_STATE_FAILED, [
        textPart(outcome.error?.message || outcome.answer || 'The run failed.'),
      ]);
    if (outcome.status !== 'finished')
      return tell.say(TaskState.TASK_STATE_FAILED, [textPart(`The run stopped while ${outcome.status}.`)]);
    if (outcome.finishReason === 'cancelled') return tell.say(TaskState.TASK_STATE_CANCELED, [textPart('Cancelled.')]);
    if (outcome.answer) tell.give(artifact(ANSWER_ARTIFACT, 'answer', [textPart(outcome.answer)]));
    const { workspace } = this.options.runOptions;
    if (workspace !== undefined && since !== undefined) {
      for (const file of await changedFiles(workspace, since)) tell.give(file);
    }
    tell.say(TaskState.TASK_STATE_COMPLETED, outcome.answer ? [textPart(outcome.answer)] : undefined);
  }
}

/** Says how the task goes (a status, maybe with a message) and gives its artifacts. */
interface Teller {
  say(state: TaskState, parts?: readonly Part[]): void;
  give(output: Artifact): void;
}

/** How a run ended or paused, as a leg's result or a stored state says it. */
type Ending = Pick<RunOutcome, 'status' | 'finishReason' | 'answer' | 'error' | 'pending'>;

const endingOf = (state: AgentState): Ending => ({
  status: state.status,
  ...(state.finishReason ? { finishReason: state.finishReason } : {}),
  answer: state.answer ?? '',
  ...(state.error ? { error: state.error } : {}),
  pending: [],
});

/** What a run item tells the client while the task works: a tool call, its result, a thought, an answer given. */
function progressOf(item: RunItem, tools: Map<string, string>): Part[] | undefined {
  if (item.type === 'effect' && item.effect.type === 'callTool') {
    const { id, call, args } = item.effect;
    tools.set(id, call.name);
    return [
      textPart(`Calling ${call.name}(${clip(JSON.stringify(args) ?? '')})`),
      dataPart({ kind: 'toolCall', effectId: id, tool: call.name, args }),
    ];
  }
  if (item.type !== 'event') return undefined;
  const { event } = item;
  switch (event.type) {
    case 'llmResponded':
      // A reply without calls is the answer, told once at the end.
      return event.content && event.toolCalls.length > 0
        ? [textPart(event.content), dataPart({ kind: 'thought', effectId: event.effectId })]
        : undefined;
    case 'toolCompleted': {
      const tool = tools.get(event.effectId) ?? 'a tool';
      const output = clip(event.output);
      return [
        textPart(`${tool} ${event.isError ? 'failed' : 'returned'}: ${output}`),
        dataPart({ kind: 'toolResult', effectId: event.effectId, tool, output, isError: event.isError === true }),
      ];
    }
    case 'humanReplied':
      return [textPart(`Answered: ${event.answer}`), dataPart({ kind: 'answer', effectId: event.effectId })];
    case 'approvalGiven':
      return [textPart('Approved.'), dataPart({ kind: 'approval', effectId: event.effectId, approved: true })];
    case 'approvalDenied':
      return [
        textPart(`Denied${event.reason ? `: ${event.reason}` : '.'}`),
        dataPart({ kind: 'approval', effectId: event.effectId, approved: false }),
      ];
    default:
      return undefined;
  }
}
