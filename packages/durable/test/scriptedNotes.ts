import type { RecordedRequest, ScriptedReply } from '@openmanus/core/testing';

/** How many tool results the request carries: the turns of the run done so far. */
export const turnsDone = (request: RecordedRequest): number =>
  request.messages.filter((message) => message.role === 'tool').length;

/** The task text of the request (the first user message), which names the run. */
export const taskOf = (request: RecordedRequest): string =>
  String(request.messages.find((message) => message.role === 'user')?.content ?? '');

/** The model's decisions for a run that records `notes` notes, one a turn, then answers `done`. */
export function noteReply(request: RecordedRequest, notes: number): ScriptedReply {
  const done = turnsDone(request);
  if (done >= notes) return { content: 'done' };
  return { toolCalls: [{ name: 'record', arguments: { note: `note ${done + 1}` } }] };
}
