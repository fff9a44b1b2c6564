import type { RecordedRequest, ScriptedReply } from '@openmanus/core/testing';

/** What a request to a flow's model is for: the plan, an executor's step (by index), or the summary. */
export type Purpose = 'plan' | `step ${number}` | 'summary';

/** The request's last user message: the plan's task, an executor's step prompt, or the summary's. */
export const promptOf = (request: RecordedRequest): string =>
  String(request.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');

export function purposeOf(request: RecordedRequest): Purpose {
  if (request.tool_choice === 'required') return 'plan';
  const user = promptOf(request);
  const step = user.match(/Your task now is step (\d+)/)?.[1];
  if (step !== undefined) return `step ${Number(step)}`;
  if (user.startsWith('The plan is done')) return 'summary';
  throw new Error(`the script has no reply for: ${user.slice(0, 80)}`);
}

/** The step an executor is asked to do, as the plan has it (`[RECORDER] Note …`). */
export const stepTextOf = (request: RecordedRequest): string =>
  promptOf(request).match(/Your task now is step \d+: "(.*)"\./)?.[1] ?? '';

export interface FlowScript {
  /** The plan the model makes for the task the flow was given. */
  readonly plan: (task: string) => { readonly id: string; readonly title: string; readonly steps: readonly string[] };
  /** An executor's reply in its run for a step (the request has its turns so far and the prompt). */
  readonly step: (request: RecordedRequest) => ScriptedReply;
  readonly summary: string;
}

/** The model's decisions for a planning flow: the plan, each step's replies, the summary. */
export function flowScript(script: FlowScript): (request: RecordedRequest) => ScriptedReply {
  return (request) => {
    const purpose = purposeOf(request);
    if (purpose === 'plan') {
      const { id, title, steps } = script.plan(promptOf(request));
      const create = { command: 'create', plan_id: id, title, steps };
      return { toolCalls: [{ id: 'call_plan', name: 'planning', arguments: create }] };
    }
    if (purpose === 'summary') return { content: script.summary };
    return script.step(request);
  };
}
