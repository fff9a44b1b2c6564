import { LOG_LEVELS, type RunItem, type RunOutcome, type Usage } from '@openmanus/core';
import { emptyUsage } from '@openmanus/core/kernel';
import { terminalText } from './terminalText.js';
import { usageText } from './usageText.js';

export interface ProgressOptions {
  readonly write: (line: string) => void;
  readonly color: boolean;
  readonly now?: () => number;
}

/** `text` in the ANSI colour or style `code`, when `on`. */
export const paint = (on: boolean, code: number) => (text: string) => (on ? `\u001b[${code}m${text}\u001b[0m` : text);

/** One line, at most `max` characters, for previews of arguments and observations; control characters escaped. */
export function preview(text: string, max: number): string {
  const flat = terminalText(text.replace(/\s+/g, ' ').trim(), { oneLine: true });
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

/** A finished run, as far as its summary line tells it. */
type Finished = Pick<RunOutcome, 'status' | 'finishReason' | 'error' | 'usage'> & {
  readonly state: { readonly step: number };
};

/**
 * The lines of a run in the CLI's styles, whatever they are read from: a run in process
 * (`createProgress`, from run items) and a durable run followed from its events (`runEventLines`)
 * print the same things the same way.
 */
/** What a jump of the history did, for its progress line. */
function trimmedParts(o: { readonly dropped: number; readonly shrunk: number }): string[] {
  const parts: string[] = [];
  if (o.dropped > 0) parts.push(`${o.dropped} older message${o.dropped === 1 ? '' : 's'} left out`);
  if (o.shrunk > 0) parts.push(`${o.shrunk} shortened`);
  return parts;
}

/** The markers around an MCP server's text, which tell the model whose words they are; a person sees the line's tool. */
const MCP_MARKERS = /<mcp_content server="(?:[^"\\]|\\.)*" untrusted="true">\n|\n<\/mcp_content>/g;

export function runLines(color: boolean) {
  const dim = paint(color, 2);
  const red = paint(color, 31);
  const cyan = paint(color, 36);
  return {
    /** A step's heading, then notes on the run so far (time taken, tokens and cost). */
    step: (heading: string, ...notes: string[]) => paint(color, 1)(heading) + dim(`  ${notes.join(' · ')}`),
    tokens: usageText,
    /** What the model said, if anything. */
    said: (content: string) => (content.trim() ? [`  ${preview(content, 160)}`] : []),
    /** A tool call, with its arguments as shown (`previewArgs`). */
    toolCall: (name: string, args: string) => cyan(`  → ${terminalText(name, { oneLine: true })}`) + dim(`(${args})`),
    toolResult: (output: string, isError = false) => {
      const line = `  ← ${preview(output.replace(MCP_MARKERS, ''), 120)}`;
      return isError ? red(line) : dim(line);
    },
    modelFailed: (error: string) => red(`  model call failed: ${preview(error, 160)}`),
    /** The summary: how it ended, after how many steps (and how long, when known), model calls, tokens and cost. */
    finished: (run: Finished, elapsed?: string) => {
      const ok = run.finishReason === 'answered' || run.finishReason === 'terminated';
      const counts = [`${run.state.step} step(s)`, ...(elapsed ? [elapsed] : []), `${run.usage.llmCalls} model calls`];
      const summary = `${run.finishReason ?? run.status} after ${counts.join(', ')}, ${usageText(run.usage)}`;
      return (
        paint(color, ok ? 32 : 31)(`■ ${summary}`) +
        (run.error && !ok ? red(` — ${terminalText(run.error.message)}`) : '')
      );
    },
  };
}

/**
 * Turns run items into lines a person can follow: step n/max, tools, observations, tokens and cost,
 * time, and what a tool call reports while it runs (an MCP server's progress and log lines).
 */
export function createProgress(options: ProgressOptions) {
  const now = options.now ?? Date.now;
  const started = now();
  const lines = runLines(options.color);
  const dim = paint(options.color, 2);
  const cyan = paint(options.color, 36);
  const yellow = paint(options.color, 33);
  const red = paint(options.color, 31);
  const elapsed = () => `${((now() - started) / 1000).toFixed(1)}s`;
  let usage: Usage = emptyUsage;

  return (item: RunItem) => {
    switch (item.type) {
      case 'observation': {
        const o = item.observation;
        if (o.kind === 'stepStarted')
          options.write(lines.step(`Step ${o.step}${o.maxSteps ? `/${o.maxSteps}` : ''}`, elapsed(), usageText(usage)));
        else if (o.kind === 'hint') options.write(yellow(`  ! ${o.policy}: a hint is sent with the next request`));
        else if (o.kind === 'memoryTrimmed')
          options.write(dim(`  (history shrunk in one jump: ${trimmedParts(o).join(', ')})`));
        else if (o.kind === 'toolCallsIgnored')
          options.write(yellow(`  ! ${o.count} tool call(s) ignored (tool choice "none")`));
        return;
      }
      case 'effect': {
        const e = item.effect;
        if (e.type === 'callTool') options.write(lines.toolCall(e.call.name, previewArgs(e.args)));
        if (e.type === 'askHuman') options.write(cyan('  → ask_human') + dim(`(${preview(e.question, 80)})`));
        if (e.type === 'requestApproval')
          options.write(yellow(`  ? approval needed for ${terminalText(e.call.name, { oneLine: true })}`));
        return;
      }
      case 'event': {
        const e = item.event;
        usage = item.state.usage;
        if (e.type === 'llmResponded') for (const line of lines.said(e.content)) options.write(line);
        if (e.type === 'toolCompleted') options.write(lines.toolResult(e.output, e.isError));
        return;
      }
      case 'progress': {
        const done = `${item.progress}${item.total !== undefined ? `/${item.total}` : ''}`;
        options.write(
          dim(
            `  ⋯ ${terminalText(item.tool, { oneLine: true })} ${done}${item.message ? ` ${preview(item.message, 80)}` : ''}`,
          ),
        );
        return;
      }
      case 'log': {
        const data = typeof item.data === 'string' ? item.data : (JSON.stringify(item.data) ?? '');
        const from = item.logger ? `${item.logger}: ` : '';
        const line = `  [${item.level}] ${preview(`${from}${data}`, 120)}`;
        const level = LOG_LEVELS.indexOf(item.level);
        options.write(
          level >= LOG_LEVELS.indexOf('error')
            ? red(line)
            : level >= LOG_LEVELS.indexOf('warning')
              ? yellow(line)
              : dim(line),
        );
        return;
      }
      case 'result':
        options.write(lines.finished(item.result, elapsed()));
    }
  };
}
