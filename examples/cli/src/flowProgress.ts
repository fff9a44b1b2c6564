import type { RunItem } from '@openmanus/core';
import { type FlowItem, type FlowObservation, type Plan, planOf } from '@openmanus/flow';
import type { LiveView } from './liveView.js';
import { planView } from './planView.js';
import { createProgress, paint, preview } from './progress.js';
import { terminalText } from './terminalText.js';
import { usageText } from './usageText.js';

export interface FlowProgressOptions {
  readonly view: LiveView;
  /** Colour in the plan view (stdout) and in the log lines (stderr). */
  readonly color: { readonly view: boolean; readonly log: boolean };
  /** The terminal's width, when the view is redrawn in place (its lines must fit). */
  readonly width?: () => number | undefined;
  readonly now?: () => number;
}

const observed = (o: FlowObservation): string => {
  switch (o.kind) {
    case 'planFallback':
      return `! no plan from the model (${o.reason}): using the default plan`;
    case 'stepRetried':
      return `! step ${o.index}: attempt ${o.attempt}, after: ${o.reason}`;
    case 'stepBlocked':
      return `! step ${o.index} is blocked: ${o.reason}`;
    case 'planKept':
      return `! the plan stays as it was: ${o.reason}`;
  }
};

/**
 * Shows a flow as it runs: the plan view whenever it changes (made, a step started, done,
 * blocked, replanned), and between views the executors' progress lines as `openmanus` prints
 * them, each led by the step it works on (`step 1 [manus]`).
 */
export function createFlowProgress(options: FlowProgressOptions): (item: FlowItem) => void {
  const { view, color } = options;
  const now = options.now ?? Date.now;
  const started = now();
  const log = (line: string) => view.above(`${line}\n`);
  const dim = paint(color.log, 2);
  const yellow = paint(color.log, 33);
  let plan: Plan | undefined;
  let shown = '';
  // One progress printer per executor run, so each counts its own steps and time.
  const runs = new Map<string, (item: RunItem) => void>();

  const showPlan = (next: Plan) => {
    plan = next;
    // Changes are what a person sees: statuses, notes, steps, the title.
    const plain = planView(next, { color: false }).join('\n');
    if (next.steps.length === 0 || plain === shown) return;
    shown = plain;
    const width = options.width?.();
    view.show(planView(next, { color: color.view, ...(width ? { width } : {}) }));
  };

  return (item) => {
    switch (item.type) {
      case 'event':
        showPlan(planOf(item.state));
        return;
      case 'effect': {
        const { effect } = item;
        if (effect.type === 'callLlm') {
          const asks = { plan: 'a plan', replan: 'a changed plan', summary: 'the summary' }[effect.purpose];
          log(dim(`${effect.purpose}: asking the model for ${asks}`));
          return;
        }
        const text = effect.stepIndex === undefined ? 'the summary' : (plan?.steps[effect.stepIndex]?.text ?? '');
        log(dim(`${leadOf(effect.executor, effect.stepIndex)}▶ ${preview(text, 120)}`));
        return;
      }
      case 'agent': {
        let progress = runs.get(item.effectId);
        if (!progress) {
          const lead = dim(leadOf(item.executor, item.stepIndex));
          progress = createProgress({ write: (line) => log(lead + line), color: color.log, now });
          runs.set(item.effectId, progress);
        }
        progress(item.item);
        return;
      }
      case 'observation':
        log(yellow(terminalText(observed(item.observation))));
        return;
      case 'result': {
        const r = item.result;
        const done = r.plan.steps.filter((step) => step.status === 'completed').length;
        const blocked = r.plan.steps.filter((step) => step.status === 'blocked').length;
        const ok = r.finishReason === 'completed';
        const seconds = ((now() - started) / 1000).toFixed(1);
        const summary =
          `■ flow ${r.finishReason ?? r.status}: ${done}/${r.plan.steps.length} steps completed, ${blocked} blocked, ` +
          `${seconds}s, ${r.usage.llmCalls} model calls, ${usageText(r.usage)}`;
        log(paint(color.log, ok ? 32 : 31)(summary));
      }
    }
  };
}

const leadOf = (executor: string, stepIndex: number | undefined) =>
  `${stepIndex === undefined ? 'summary' : `step ${stepIndex}`} [${executor}] `;
