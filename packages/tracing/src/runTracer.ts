import type { ItemOrigin, RunItem, RunOutcome, Usage } from '@openmanus/core';
import { costOf } from '@openmanus/core';
import type { LlmUsage } from '@openmanus/core/kernel';
import { emptyUsage, usageSince } from '@openmanus/core/kernel';
import {
  type Attributes,
  type Context,
  context,
  diag,
  isSpanContextValid,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { inputMessages, outputMessages, systemInstructions, taskMessages } from './content.js';
import { ERROR_TYPE, GEN_AI, OPENMANUS } from './semconv.js';
import { parseTraceLink, spanContextOf, type TraceLink, traceparentOf } from './traceLink.js';
import { VERSION } from './version.js';

export interface TracingOptions {
  /** Default: `trace.getTracer('@openmanus/tracing', version)`, a no-op until the host registers a provider. */
  readonly tracer?: Tracer;
  /** Record prompts, replies, tool arguments and results (the opt-in `gen_ai.*` content attributes). Default false. */
  readonly captureContent?: boolean;
  /** `gen_ai.provider.name` (default `openai`: the API core's model adapter speaks). */
  readonly provider?: string;
  /**
   * Called when the run pauses for an approval or a person, with the link to keep beside the paused
   * state (it is plain JSON) and give as `continues` to the run that resumes it. Not called when the
   * run's span has no context to link to (no tracer provider registered).
   */
  readonly onPause?: (link: TraceLink) => void;
  /**
   * The link `onPause` gave for the paused run this one resumes: the run's span continues that
   * trace (its parent is the paused run's span), after an `openmanus.wait` span for the pause.
   * Checked first (it comes back from storage): one that is not a link this package wrote starts a
   * new trace, as no link does, with a warning through OpenTelemetry's `diag`.
   */
  readonly continues?: TraceLink | undefined;
}

/** The run a tracer follows: the agent and model of its top-level items. */
export interface TracedRun extends TracingOptions {
  readonly agent: string;
  readonly description?: string;
  readonly model: string;
  /** The context the run's span starts in (default: the one active when the tracer is made). */
  readonly context?: Context;
}

/** A span and the context that makes it the parent of the spans started in it. */
interface Open {
  readonly span: Span;
  readonly context: Context;
}

/** One agent run being traced: the run's own, or a child agent's (an `agentTool` call). */
interface RunTrace extends Open {
  readonly model: string;
  step?: Open;
  /** Model and tool calls in flight, by effect id. */
  readonly calls: Map<string, Open>;
  /** The state's usage when the run started (a continued conversation counts from there). */
  usageBefore?: Usage;
  runId?: string;
}

/** What a paused run's status says it waits for. */
const WAITS_FOR: Partial<Record<RunOutcome['status'], string>> = {
  awaiting_approval: 'approval',
  awaiting_human: 'human',
};

/** Runs are keyed by their origin: the effect ids of the tool calls that ran them, outermost first. */
const keyOf = (origin: readonly ItemOrigin[]) => origin.map((o) => o.effectId).join('/');
const within = (key: string, ancestor: string) => ancestor === '' || key === ancestor || key.startsWith(`${ancestor}/`);

/** `server (HTTP 500): …` → `server`: the LLM port's error kind, low-cardinality as `error.type` wants. */
/**
 * Turns one run's items into spans as they arrive: `invoke_agent` for the run (and for each child
 * agent, under the tool call that ran it), a span per step, `chat` per model call and
 * `execute_tool` per tool call. Spans still open when the run's result arrives (a cancel, a
 * fault) end there, marked as cut short. Never throws: a tracing bug must not stop a run.
 */
export function createRunTracer(traced: TracedRun): (item: RunItem) => void {
  const tracer = traced.tracer ?? trace.getTracer('@openmanus/tracing', VERSION);
  const provider = traced.provider ?? 'openai';
  const capture = traced.captureContent === true;
  const active = traced.context ?? context.active();
  const link = traced.continues === undefined ? undefined : parseTraceLink(traced.continues);
  // Stored links come back from outside: nothing of one that is malformed is recorded.
  if (traced.continues !== undefined && !link)
    diag.warn('@openmanus/tracing: `continues` is not a trace link; the resumed run starts a new trace');
  const paused = link ? spanContextOf(link.traceparent) : undefined;
  const parent = paused ? trace.setSpanContext(active, paused) : active;
  // The span the run was resumed in (the request that answered it) is in another trace: linked, not the parent.
  const resumedIn = paused ? trace.getSpanContext(active) : undefined;
  const runs = new Map<string, RunTrace>();

  const start = (name: string, kind: SpanKind, attributes: Attributes, under: Context, links?: Link[]): Open => {
    const span = tracer.startSpan(name, { kind, attributes, ...(links ? { links } : {}) }, under);
    return { span, context: trace.setSpan(under, span) };
  };

  /** The pause a resumed run continues, as a span from when it paused to now, beside the paused run's. */
  function recordWait(pausedAt: string, waitingFor: string | undefined, first: RunItem): void {
    const now = Date.now();
    const answer = first.type === 'event' ? first.event : undefined;
    const effectId =
      answer && 'effectId' in answer && typeof answer.effectId === 'string' ? answer.effectId : undefined;
    const runId = first.type === 'event' ? first.state.runId : undefined;
    const span = tracer.startSpan(
      'openmanus.wait',
      {
        kind: SpanKind.INTERNAL,
        // Another machine's clock may be ahead: a wait never ends before it starts.
        startTime: new Date(Math.min(Date.parse(pausedAt), now)),
        attributes: {
          ...(waitingFor !== undefined ? { [OPENMANUS.waitFor]: waitingFor } : {}),
          ...(answer ? { [OPENMANUS.waitResumedBy]: answer.type } : {}),
          ...(effectId !== undefined ? { [OPENMANUS.effectId]: effectId } : {}),
          ...(runId !== undefined ? { [OPENMANUS.runId]: runId } : {}),
        },
      },
      parent,
    );
    span.end(new Date(now));
  }

  function openRun(origin: readonly ItemOrigin[], first: RunItem): RunTrace {
    const via = origin.at(-1);
    if (!via && link) recordWait(link.pausedAt, link.waitingFor, first);
    const outer = via ? runs.get(keyOf(origin.slice(0, -1))) : undefined;
    const agent = via ? (via.agent ?? via.tool) : traced.agent;
    const model = via?.model ?? outer?.model ?? traced.model;
    const where = via && outer ? (outer.calls.get(via.effectId) ?? outer.step ?? outer).context : parent;
    const opened = start(
      `invoke_agent ${agent}`,
      SpanKind.INTERNAL,
      {
        [GEN_AI.operationName]: 'invoke_agent',
        [GEN_AI.providerName]: provider,
        [GEN_AI.agentName]: agent,
        [GEN_AI.requestModel]: model,
        ...(!via && traced.description ? { [GEN_AI.agentDescription]: traced.description } : {}),
      },
      where,
      !via && resumedIn ? [{ context: resumedIn }] : undefined,
    );
    return { ...opened, model, calls: new Map() };
  }

  function runOf(item: RunItem): [string, RunTrace] {
    const key = keyOf(item.origin ?? []);
    let run = runs.get(key);
    if (!run) {
      run = openRun(item.origin ?? [], item);
      runs.set(key, run);
    }
    return [key, run];
  }

  function finishCall(run: RunTrace, effectId: string, end: (span: Span) => void): void {
    const call = run.calls.get(effectId);
    if (!call) return;
    run.calls.delete(effectId);
    end(call.span);
    call.span.end();
  }

  function fail(span: Span, type: string, message?: string): void {
    span.setAttribute(ERROR_TYPE, type);
    span.setStatus({ code: SpanStatusCode.ERROR, ...(message !== undefined ? { message } : {}) });
  }

  function onEvent(run: RunTrace, item: Extract<RunItem, { type: 'event' }>): void {
    const { event, state } = item;
    run.usageBefore ??= state.usage;
    const runId = ('runId' in event ? event.runId : undefined) ?? state.runId;
    if (runId && run.runId === undefined) {
      run.runId = runId;
      run.span.setAttributes({ [OPENMANUS.runId]: runId, [GEN_AI.conversationId]: runId });
    }
    switch (event.type) {
      case 'started':
        if (capture) run.span.setAttribute(GEN_AI.inputMessages, taskMessages(event.input));
        return;
      case 'llmResponded':
        finishCall(run, event.effectId, (span) => {
          // The port gives no finish reason of its own: a reply with tool calls stopped for them.
          const finishReason = event.toolCalls.length > 0 ? 'tool_call' : 'stop';
          span.setAttribute(GEN_AI.responseFinishReasons, [finishReason]);
          // A call without a cost of its own has an unknown one (its port prices nothing).
          if (event.usage) span.setAttributes(usageAttributes(event.usage, event.usage.costUsd ?? null));
          if (capture)
            span.setAttribute(GEN_AI.outputMessages, outputMessages(event.content, event.toolCalls, finishReason));
        });
        return;
      case 'llmFailed':
        finishCall(run, event.effectId, (span) => fail(span, event.error.code, event.error.message));
        return;
      case 'toolCompleted':
        finishCall(run, event.effectId, (span) => {
          // The output is what the model reads next: content, kept out unless asked for.
          if (event.isError) fail(span, 'tool_error', capture ? event.output : undefined);
          if (capture) span.setAttribute(GEN_AI.toolCallResult, event.output);
        });
        return;
      case 'toolSuspended':
        finishCall(run, event.effectId, (span) => span.setAttribute(OPENMANUS.toolSuspended, true));
        return;
    }
  }

  function onEffect(run: RunTrace, item: Extract<RunItem, { type: 'effect' }>): void {
    const { effect } = item;
    const where = (run.step ?? run).context;
    if (effect.type === 'callLlm') {
      const { messages } = effect.request;
      const system = capture ? systemInstructions(messages) : undefined;
      const call = start(
        `chat ${run.model}`,
        SpanKind.CLIENT,
        {
          [GEN_AI.operationName]: 'chat',
          [GEN_AI.providerName]: provider,
          [GEN_AI.requestModel]: run.model,
          [OPENMANUS.effectId]: effect.id,
          ...(capture ? { [GEN_AI.inputMessages]: inputMessages(messages) } : {}),
          ...(system ? { [GEN_AI.systemInstructions]: system } : {}),
        },
        where,
      );
      run.calls.set(effect.id, call);
    } else if (effect.type === 'callTool') {
      const call = start(
        `execute_tool ${effect.call.name}`,
        SpanKind.INTERNAL,
        {
          [GEN_AI.operationName]: 'execute_tool',
          [GEN_AI.toolName]: effect.call.name,
          [GEN_AI.toolCallId]: effect.call.id,
          [GEN_AI.toolType]: 'function',
          [OPENMANUS.effectId]: effect.id,
          ...(capture ? { [GEN_AI.toolCallArguments]: effect.call.arguments } : {}),
        },
        where,
      );
      run.calls.set(effect.id, call);
    }
  }

  function onObservation(run: RunTrace, item: Extract<RunItem, { type: 'observation' }>): void {
    const { observation } = item;
    if (observation.kind !== 'stepStarted') return;
    run.step?.span.end();
    run.step = start(
      'openmanus.step',
      SpanKind.INTERNAL,
      {
        [OPENMANUS.stepNumber]: observation.step,
        ...(observation.maxSteps !== undefined ? { [OPENMANUS.stepMax]: observation.maxSteps } : {}),
      },
      run.context,
    );
  }

  /** Ends what is still open in a run: calls cut short, the step, then the run itself. */
  function close(run: RunTrace, why: { type: string; message: string }, outcome?: RunOutcome): void {
    for (const call of run.calls.values()) {
      fail(call.span, why.type, why.message);
      call.span.end();
    }
    run.calls.clear();
    run.step?.span.end();
    if (outcome) {
      const usage = usageSince(outcome.usage, run.usageBefore ?? emptyUsage);
      run.span.setAttributes({
        [OPENMANUS.runId]: outcome.runId,
        [OPENMANUS.runStatus]: outcome.status,
        ...usageAttributes(usage, costOf(usage)),
        [OPENMANUS.llmCalls]: usage.llmCalls,
        ...(outcome.finishReason ? { [OPENMANUS.finishReason]: outcome.finishReason } : {}),
        ...(capture && outcome.answer ? { [GEN_AI.outputMessages]: outputMessages(outcome.answer, [], 'stop') } : {}),
      });
      if (outcome.status === 'failed')
        fail(run.span, outcome.error?.code ?? outcome.finishReason ?? '_OTHER', outcome.error?.message);
    } else {
      fail(run.span, why.type, why.message);
    }
    run.span.end();
  }

  function onResult(key: string, run: RunTrace, outcome: RunOutcome): void {
    const ended = outcome.finishReason ?? outcome.status;
    const cut = {
      type: outcome.finishReason === 'cancelled' ? 'cancelled' : '_OTHER',
      message: `the run ended (${ended}) before this finished`,
    };
    // Child runs still open (a cancel reaches them after the parent has stopped listening) end first, innermost first.
    const inside = [...runs.keys()].filter((k) => k !== key && within(k, key)).sort((a, b) => b.length - a.length);
    for (const child of inside) {
      const childRun = runs.get(child);
      runs.delete(child);
      if (childRun) close(childRun, cut);
    }
    runs.delete(key);
    close(run, cut, outcome);
    if (key === '' && traced.onPause && outcome.status !== 'finished' && outcome.status !== 'failed') {
      const spanContext = run.span.spanContext();
      if (!isSpanContextValid(spanContext)) return;
      const waitingFor = WAITS_FOR[outcome.status];
      // A host's onPause that throws is caught with the rest (below): the run goes on.
      traced.onPause({
        traceparent: traceparentOf(spanContext),
        pausedAt: new Date().toISOString(),
        ...(waitingFor ? { waitingFor } : {}),
      });
    }
  }

  function record(item: RunItem): void {
    const [key, run] = runOf(item);
    if (item.type === 'event') onEvent(run, item);
    else if (item.type === 'effect') onEffect(run, item);
    else if (item.type === 'observation') onObservation(run, item);
    else if (item.type === 'result') onResult(key, run, item.result);
  }

  return (item) => {
    try {
      record(item);
    } catch (error) {
      diag.error('@openmanus/tracing: a run item could not be traced', error);
    }
  };
}

/** Usage as span attributes: the tokens, the parts of them the provider reported, and the cost when known. */
function usageAttributes(usage: LlmUsage, costUsd: number | null): Attributes {
  const { cachedInputTokens, cacheWriteTokens, reasoningTokens } = usage;
  return {
    [GEN_AI.inputTokens]: usage.inputTokens,
    [GEN_AI.outputTokens]: usage.outputTokens,
    ...(cachedInputTokens !== undefined ? { [GEN_AI.cacheReadInputTokens]: cachedInputTokens } : {}),
    ...(cacheWriteTokens !== undefined ? { [GEN_AI.cacheCreationInputTokens]: cacheWriteTokens } : {}),
    ...(reasoningTokens !== undefined ? { [GEN_AI.reasoningOutputTokens]: reasoningTokens } : {}),
    ...(costUsd !== null ? { [OPENMANUS.costUsd]: costUsd } : {}),
  };
}
