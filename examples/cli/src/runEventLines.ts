import type { RunEventItem } from '@openmanus/durable';
import { paint, preview, previewArgs } from './progress.js';

/**
 * A durable run's transitions as lines a person can follow, as `openmanus` prints a run in
 * process: the step, what the model said, the tools it called and what they returned.
 */
export function runEventLines(item: RunEventItem, color: boolean): string[] {
  const dim = paint(color, 2);
  const cyan = paint(color, 36);
  const red = paint(color, 31);
  const { event } = item;
  switch (event.type) {
    case 'llmResponded':
      return [
        paint(color, 1)(`Step ${item.step}`) +
          dim(`  ${item.usage.inputTokens} in / ${item.usage.outputTokens} out tokens`),
        ...(event.content.trim() ? [`  ${preview(event.content, 160)}`] : []),
        ...event.toolCalls.map((call) => cyan(`  → ${call.name}`) + dim(`(${argumentsOf(call.arguments)})`)),
      ];
    case 'llmFailed':
      return [red(`  model call failed: ${preview(event.error, 160)}`)];
    case 'toolCompleted': {
      const line = `  ← ${preview(event.output, 120)}`;
      return [event.isError ? red(line) : dim(line)];
    }
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
