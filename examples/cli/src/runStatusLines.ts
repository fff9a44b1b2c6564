import type { PendingInput, Usage } from '@openmanus/core';
import type { FlowInfo, RunInfo } from '@openmanus/durable';
import { planView } from './planView.js';
import { preview, previewArgs } from './progress.js';
import { terminalText } from './terminalText.js';
import { usageText } from './usageText.js';

/** Where a durable run is, for a person: its status, its counts, its answer, and what it waits for. */
export function runStatusLines(info: RunInfo): string[] {
  const { runId } = info;
  switch (info.status) {
    case 'queued':
      return [`Run ${runId}: queued, waiting for a worker`];
    case 'running': {
      const { progress } = info;
      const where = `Run ${runId}: running${on(info.workerId)}`;
      if (!progress) return [where];
      return [
        `${where}, step ${progress.step}, ${counts(progress.usage)}`,
        ...progress.pending.map((input) => waitingLine(runId, input)),
      ];
    }
    case 'ended': {
      const { outcome } = info;
      return [
        `Run ${runId}: ${outcome.finishReason ?? outcome.status}${on(info.workerId)} after ${outcome.state.step} step(s), ${counts(outcome.usage)}`,
        ...(outcome.error ? [`Error: ${terminalText(outcome.error.message)}`] : []),
        ...outcome.pending.map((input) => waitingLine(runId, input)),
        ...(outcome.answer ? [`Answer: ${terminalText(outcome.answer)}`] : []),
      ];
    }
    case 'cancelled':
      return [`Run ${runId}: cancelled`];
    case 'errored':
      return [`Run ${runId}: failed: ${terminalText(info.error.message)}`];
  }
}

/** Where a durable flow is: its status, its plan as far as it got, the run of the step in flight, its summary. */
export function flowStatusLines(info: FlowInfo): string[] {
  const { runId: flowId } = info;
  const plan = (view: Parameters<typeof planView>[0]) => planView(view, { color: false }).map((line) => `  ${line}`);
  switch (info.status) {
    case 'queued':
      return [`Flow ${flowId}: queued, waiting for a worker`];
    case 'running': {
      const { progress } = info;
      const where = `Flow ${flowId}: running${on(info.workerId)}`;
      if (!progress) return [where];
      return [
        `${where}, ${counts(progress.usage)}`,
        ...plan(progress.plan),
        ...(progress.runId ? [`Step in flight: run ${progress.runId} (openmanus status ${progress.runId})`] : []),
      ];
    }
    case 'ended': {
      const { outcome } = info;
      return [
        `Flow ${flowId}: ${outcome.finishReason ?? outcome.status}${on(info.workerId)}, ${counts(outcome.usage)}`,
        ...(outcome.error ? [`Error: ${terminalText(outcome.error.message)}`] : []),
        ...plan(outcome.plan),
        ...(outcome.answer ? [`Summary: ${terminalText(outcome.answer)}`] : []),
      ];
    }
    case 'cancelled':
      return [`Flow ${flowId}: cancelled`];
    case 'errored':
      return [`Flow ${flowId}: failed: ${terminalText(info.error.message)}`];
  }
}

const on = (workerId: string | undefined) => (workerId ? ` on ${workerId}` : '');

const counts = (usage: Usage) => `${usage.llmCalls} model calls, ${usageText(usage)}`;

/** What the run waits for, and the command that gives it. */
export function waitingLine(runId: string, input: PendingInput): string {
  return input.kind === 'approval'
    ? `Waiting for approval of ${callText(input)} [${input.effectId}]: openmanus approve ${runId}`
    : `Waiting for an answer to "${preview(input.question, 200)}" [${input.effectId}]: openmanus answer ${runId} "…"`;
}

/** `python_execute(code: "print(1)")`. */
export const callText = (input: Extract<PendingInput, { kind: 'approval' }>) =>
  `${terminalText(input.call.name, { oneLine: true })}(${previewArgs(input.args)})`;
