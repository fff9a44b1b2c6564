import type { RunEventItem } from '@openmanus/durable';
import { preview, previewArgs, runLines } from './progress.js';

/**
 * A durable run's transitions as lines a person can follow, as `openmanus` prints a run in
 * process (`runLines`): the step, what the model said, the tools it called and what they returned.
 */
export function runEventLines(item: RunEventItem, color: boolean): string[] {
  const lines = runLines(color);
  const { event } = item;
  switch (event.type) {
    case 'llmResponded':
      return [
        lines.step(`Step ${item.step}`, lines.tokens(item.usage)),
        ...lines.said(event.content),
        ...event.toolCalls.map((call) => lines.toolCall(call.name, argumentsOf(call.arguments))),
      ];
    case 'llmFailed':
      return [lines.modelFailed(event.error.message)];
    case 'toolCompleted':
      return [lines.toolResult(event.output, event.isError)];
    default:
      return [];
  }
}

/** A call's arguments as the model sent them (JSON text), on one line. */
function argumentsOf(json: string): string {
  try {
    return previewArgs(JSON.parse(json));
  } catch {
    return preview(json, 60);
  }
}
