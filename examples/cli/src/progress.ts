import type { RunItem } from '@openmanus/core';

export interface ProgressOptions {
  readonly write: (line: string) => void;
  readonly color: boolean;
  readonly now?: () => number;
}

/** `text` in the ANSI colour or style `code`, when `on`. */
export const paint = (on: boolean, code: number) => (text: string) => (on ? `\u001b[${code}m${text}\u001b[0m` : text);

/** One line, at most `max` characters, for previews of arguments and observations. */
export function preview(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function previewArgs(args: unknown): string {
  if (typeof args !== 'object' || args === null) return '';
  return Object.entries(args as Record<string, unknown>)
    .map(
      ([key, value]) =>
        `${key}: ${preview(typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? ''), 60)}`,
    )
    .join(', ');
}

/** Turns run items into lines a person can follow: step n/max, tools, observations, tokens, time. */
export function createProgress(options: ProgressOptions) {
  const now = options.now ?? Date.now;
  const started = now();
  const dim = paint(options.color, 2);
  const bold = paint(options.color, 1);
  const cyan = paint(options.color, 36);
  const red = paint(options.color, 31);
  const yellow = paint(options.color, 33);
  const green = paint(options.color, 32);
  const elapsed = () => `${((now() - started) / 1000).toFixed(1)}s`;
  let tokens = { inputTokens: 0, outputTokens: 0 };

  return (item: RunItem) => {
    switch (item.type) {
      case 'observation': {
        const o = item.observation;
        if (o.kind === 'stepStarted') {
          options.write(
            bold(`Step ${o.step}/${o.maxSteps}`) +
              dim(`  ${elapsed()} · ${tokens.inputTokens} in / ${tokens.outputTokens} out tokens`),
          );
        } else if (o.kind === 'hint') options.write(yellow(`  ! ${o.policy}: a hint is sent with the next request`));
        else if (o.kind === 'memoryTrimmed')
          options.write(dim(`  (history trimmed: ${o.dropped} older messages not sent)`));
        else if (o.kind === 'toolCallsIgnored')
          options.write(yellow(`  ! ${o.count} tool call(s) ignored (tool choice "none")`));
        return;
      }
      case 'effect': {
        const e = item.effect;
        if (e.type === 'callTool') options.write(cyan(`  → ${e.call.name}`) + dim(`(${previewArgs(e.args)})`));
        if (e.type === 'askHuman') options.write(cyan('  → ask_human') + dim(`(${preview(e.question, 80)})`));
        if (e.type === 'requestApproval') options.write(yellow(`  ? approval needed for ${e.call.name}`));
        return;
      }
      case 'event': {
        const e = item.event;
        tokens = { inputTokens: item.state.usage.inputTokens, outputTokens: item.state.usage.outputTokens };
        if (e.type === 'llmResponded' && e.content.trim()) options.write(`  ${preview(e.content, 160)}`);
        if (e.type === 'toolCompleted') {
          const line = `  ← ${preview(e.output, 120)}`;
          options.write(e.isError ? red(line) : dim(line));
        }
        return;
      }
      case 'result': {
        const r = item.result;
        const ok = r.finishReason === 'answered' || r.finishReason === 'terminated';
        const summary = `${r.finishReason ?? r.status} after ${item.result.state.step} step(s), ${elapsed()}, ${r.usage.llmCalls} model calls, ${r.usage.inputTokens} in / ${r.usage.outputTokens} out tokens`;
        options.write((ok ? green : red)(`■ ${summary}`) + (r.error && !ok ? red(` — ${r.error}`) : ''));
      }
    }
  };
}
