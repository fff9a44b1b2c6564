import type { ListTasksRequest, ListTasksResponse, Message, Task } from '@a2a-js/sdk';
import { Role, TaskState } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { type Agent, type AgentState, type CheckpointStore, isFinal, restore } from '@openmanus/core';
import { pendingInputs } from '@openmanus/core/kernel';
import { askingParts } from './inputs.js';
import { agentMessage, artifact, textPart } from './parts.js';

/** What a task's checkpoint keeps besides the run's state (under `a2a`): the A2A context it belongs to. */
export interface TaskFields {
  readonly contextId: string;
}

type Saved = AgentState & { readonly a2a?: TaskFields };

/** The artifact that holds a finished run's answer. */
export const ANSWER_ARTIFACT = 'answer';

/**
 * The host's store with each task's fields saved beside its run's state, so that a server started
 * later on the same store knows the task's context (the run ignores the extra key when it loads).
 * The fields object is the same one at every save: a store that saves what changed saves it once.
 */
export function withTaskFields(
  store: CheckpointStore,
  fieldsOf: (taskId: string) => TaskFields | undefined,
): CheckpointStore {
  return {
    save: (id, state, expected) => {
      const fields = fieldsOf(id);
      return store.save(id, fields ? ({ ...state, a2a: fields } as Saved) : state, expected);
    },
    load: (id) => store.load(id),
    list: () => store.list(),
    delete: (id) => store.delete(id),
  };
}

/** The context a stored run's task belongs to (its own id for a run this server did not start). */
export const contextOf = (id: string, saved: object): string => (saved as Saved).a2a?.contextId ?? id;

/** The A2A task a run is, from its checkpoint: its state, conversation, question and answer. */
export function taskOf(agent: Agent, id: string, contextId: string, state: AgentState): Task {
  const say = (parts: ReturnType<typeof textPart>[], n: string) => agentMessage(id, contextId, parts, `${id}:${n}`);
  const history: Message[] = state.messages.flatMap((message, index): Message[] => {
    if (message.role === 'user') return [{ ...say([textPart(message.content)], String(index)), role: Role.ROLE_USER }];
    if (message.role === 'assistant' && message.content) return [say([textPart(message.content)], String(index))];
    return [];
  });
  const waiting = pendingInputs(agent.config, state);
  const [state_, message] = ((): [TaskState, Message | undefined] => {
    if (waiting[0]) return [TaskState.TASK_STATE_INPUT_REQUIRED, say(askingParts(waiting[0]), 'status')];
    if (state.status === 'failed')
      return [TaskState.TASK_STATE_FAILED, say([textPart(state.error?.message ?? 'the run failed')], 'status')];
    if (state.status === 'finished' && state.finishReason === 'cancelled')
      return [TaskState.TASK_STATE_CANCELED, undefined];
    if (state.status === 'finished')
      return [TaskState.TASK_STATE_COMPLETED, say([textPart(state.answer ?? '')], 'status')];
    if (state.status === 'idle') return [TaskState.TASK_STATE_SUBMITTED, undefined];
    return [TaskState.TASK_STATE_WORKING, undefined];
  })();
  const answer = isFinal(state) && state.answer ? [artifact(ANSWER_ARTIFACT, 'answer', [textPart(state.answer)])] : [];
  return {
    id,
    contextId,
    status: { state: state_, message, timestamp: undefined },
    artifacts: answer,
    history,
    metadata: {},
  };
}

const CACHED_TASKS = 500;
/** The bytes of files the kept tasks may hold in all. */
const CACHED_BYTES = 64 * 1024 * 1024;

/** The bytes of the files a task's artifacts hold. */
const bytesOf = (task: Task) =>
  task.artifacts.reduce(
    (sum, { parts }) =>
      sum + parts.reduce((size, part) => size + (part.content?.$case === 'raw' ? part.content.value.length : 0), 0),
    0,
  );
const PAGE = { default: 50, max: 100 } as const;

/**
 * The SDK's task store over the runs: the tasks the SDK saves are kept in memory (the most recent
 * ones, up to a number and a size of files), and a task not there is made from its run's
 * checkpoint (its answer, not its files), so that a task outlives the server that started it. `onCanceled` is told of a task the SDK cancels itself (when no run of
 * it is in flight here), to record the run as cancelled too.
 */
export class RunTaskStore implements TaskStore {
  private readonly tasks = new Map<string, Task>();
  /** The bytes of files the kept tasks hold. */
  private bytes = 0;

  constructor(
    private readonly agent: Agent,
    private readonly store: CheckpointStore,
    private readonly onCanceled: (task: Task) => Promise<void>,
  ) {}

  async save(task: Task, _context: ServerCallContext): Promise<void> {
    const before = this.tasks.get(task.id)?.status?.state;
    this.remember(structuredClone(task));
    if (task.status?.state === TaskState.TASK_STATE_CANCELED && before !== TaskState.TASK_STATE_CANCELED)
      await this.onCanceled(task);
  }

  async load(taskId: string, _context: ServerCallContext): Promise<Task | undefined> {
    const kept = this.tasks.get(taskId);
    if (kept) {
      this.remember(kept);
      return structuredClone(kept);
    }
    const stored = await this.store.load(taskId);
    if (!stored) return undefined;
    return taskOf(this.agent, taskId, contextOf(taskId, stored.state), await restore(stored.state));
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = Math.min(Math.max(1, params.pageSize ?? PAGE.default), PAGE.max);
    const offset = Number.parseInt(params.pageToken || '0', 10) || 0;
    const ids = new Set([...(await this.store.list()), ...this.tasks.keys()]);
    const matching: Task[] = [];
    for (const id of ids) {
      const task = await this.load(id, context).catch(() => undefined);
      if (!task) continue;
      if (params.contextId && task.contextId !== params.contextId) continue;
      if (params.status && task.status?.state !== params.status) continue;
      matching.push(params.includeArtifacts ? task : { ...task, artifacts: [] });
    }
    const tasks = matching.slice(offset, offset + pageSize);
    const next = offset + pageSize < matching.length ? String(offset + pageSize) : '';
    return { tasks, nextPageToken: next, pageSize, totalSize: matching.length };
  }

  private remember(task: Task) {
    const before = this.tasks.get(task.id);
    if (before) this.bytes -= bytesOf(before);
    this.tasks.delete(task.id);
    this.tasks.set(task.id, task);
    this.bytes += bytesOf(task);
    for (const [id, oldest] of this.tasks) {
      if (id === task.id || (this.tasks.size <= CACHED_TASKS && this.bytes <= CACHED_BYTES)) break;
      this.tasks.delete(id);
      this.bytes -= bytesOf(oldest);
    }
  }
}
