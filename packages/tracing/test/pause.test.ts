// A run that pauses for a person and is resumed later (here or in another process) is one trace:
// the resumed run's span under the paused run's, with an `openmanus.wait` span for the pause.
import {
  type Agent,
  type AgentEvent,
  askHuman,
  createAgent,
  defineTool,
  type RunOptions,
  resumeWith,
  run,
} from '@openmanus/core';
import { type ScriptedLlm, scriptedLlm } from '@openmanus/core/testing';
import {
  type Context,
  type ContextManager,
  context,
  DiagLogLevel,
  diag,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseTraceLink, type TraceLink, type TracingOptions, withTracing } from '../src/index.js';
import { type Collector, collector } from './collector.js';

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy the site to a target.',
  parameters: z.object({ target: z.enum(['staging', 'production']) }),
  execute: ({ target }) => `deployed to ${target}`,
});
const opsConfig = { name: 'ops', tools: [deploy] } as const;
const ops = createAgent(opsConfig);
const approvals = ['deploy'];
const deployTo = (target: string) => ({ toolCalls: [{ name: 'deploy', arguments: { target } }] });

const QUESTION = 'Which city should the trip start in?';
const ANSWER = 'Kyoto, near the Philosopher’s Path';
const planner = createAgent({ name: 'planner', tools: [askHuman] });

const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const traceOf = (span: ReadableSpan) => span.spanContext().traceId;
const nanos = ([seconds, ns]: readonly [number, number]) => BigInt(seconds) * 1_000_000_000n + BigInt(ns);
const allAttributeText = (spans: readonly ReadableSpan[]) =>
  spans.map((s) => JSON.stringify(s.attributes) + JSON.stringify(s.links) + (s.status.message ?? '')).join('\n');

/** A traced run (or resume) of `agent`, giving back the link its pause produced, if any. */
async function traced(
  spans: Collector,
  agent: Agent,
  go: (options: RunOptions) => ReturnType<typeof run>,
  options: RunOptions,
  tracing: TracingOptions = {},
) {
  const links: TraceLink[] = [];
  const outcome = await go(
    withTracing(agent, options, {
      tracer: spans.provider.getTracer('test'),
      onPause: (link) => void links.push(link),
      ...tracing,
    }),
  );
  expect(links.length).toBeLessThanOrEqual(1);
  return { outcome, link: links[0] };
}

/** Runs `ops` until its deploy waits for approval: the outcome, its link and the paused run's span. */
async function pausedDeploy(spans: Collector, llm: ScriptedLlm) {
  const { outcome, link } = await traced(spans, ops, (o) => run(ops, 'Deploy the site', o), { llm, approvals });
  expect(outcome.status).toBe('awaiting_approval');
  if (!link) throw new Error('expected a trace link from the pause');
  const [input] = outcome.pending;
  if (input?.kind !== 'approval') throw new Error('expected an approval to wait for');
  return { outcome, link, input, root: spans.one('invoke_agent ops') };
}

const approve = (effectId: string): AgentEvent => ({ type: 'approvalGiven', effectId });

describe('a run paused for approval and resumed', () => {
  it('is one trace: the resumed run under the paused one, an openmanus.wait span between them', async () => {
    const spans = collector();
    const llm = scriptedLlm([deployTo('production'), { content: 'Deployed to production.' }]);
    const { outcome: paused, link, input, root } = await pausedDeploy(spans, llm);

    // The link is plain JSON naming the paused run's span.
    expect(JSON.parse(JSON.stringify(link))).toEqual(link);
    expect(link).toEqual({
      traceparent: `00-${traceOf(root)}-${idOf(root)}-01`,
      pausedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      waitingFor: 'approval',
    });
    expect(root.attributes['openmanus.run.status']).toBe('awaiting_approval');

    const { outcome: done, link: again } = await traced(
      spans,
      ops,
      (o) => resumeWith(ops, paused.state, approve(input.effectId), o),
      { llm, approvals },
      { continues: link },
    );
    expect(done.status).toBe('finished');
    expect(again).toBeUndefined();

    expect(spans.tree()).toBe(
      [
        'invoke_agent ops',
        '  openmanus.step',
        '    chat scripted',
        '  openmanus.wait',
        '  invoke_agent ops',
        '    execute_tool deploy',
        '    openmanus.step',
        '      chat scripted',
      ].join('\n'),
    );
    expect(new Set(spans.finished().map(traceOf))).toEqual(new Set([traceOf(root)]));
    const [, resumed] = spans.byName('invoke_agent ops');
    const wait = spans.one('openmanus.wait');
    for (const span of [wait, resumed]) {
      expect(span?.parentSpanContext).toMatchObject({ traceId: traceOf(root), spanId: idOf(root), isRemote: true });
    }
    expect(wait.attributes).toEqual({
      'openmanus.wait.for': 'approval',
      'openmanus.wait.resumed_by': 'approvalGiven',
      'openmanus.effect.id': input.effectId,
      'openmanus.run.id': paused.runId,
    });
    // The wait runs from the pause to the resumed run's start.
    expect(nanos(wait.startTime)).toBe(BigInt(Date.parse(link.pausedAt)) * 1_000_000n);
    expect(nanos(wait.endTime)).toBeLessThanOrEqual(nanos(resumed?.startTime ?? [0, 0]));
    expect(resumed?.attributes).toMatchObject({ 'openmanus.run.id': paused.runId, 'openmanus.run.status': 'finished' });
    expect(spans.started.every((s) => s.ended)).toBe(true);
    expect(spans.finished().every((s) => s.status.code === SpanStatusCode.UNSET)).toBe(true);
  });

  it('in another process: a new provider and a new agent resume from the stored link and checkpoint', async () => {
    // The first process: the run pauses; the host stores the state and the link as JSON.
    const first = collector();
    const { outcome, link, input, root } = await pausedDeploy(first, scriptedLlm([deployTo('production')]));
    const stored = JSON.stringify({ state: outcome.state, trace: link });

    // The second process, an hour later by the link's clock: nothing shared but the stored text.
    const second = collector();
    const saved = JSON.parse(stored) as { state: unknown; trace: TraceLink };
    const anHourBefore = new Date(Date.now() - 3_600_000).toISOString();
    const continues = parseTraceLink({ ...saved.trace, pausedAt: anHourBefore });
    const agent = createAgent(opsConfig);
    const llm = scriptedLlm([{ content: 'Deployed to production.' }]);
    const { outcome: done } = await traced(
      second,
      agent,
      (o) => resumeWith(agent, saved.state, approve(input.effectId), o),
      { llm, approvals },
      { continues },
    );

    expect(done.status).toBe('finished');
    const resumed = second.one('invoke_agent ops');
    const wait = second.one('openmanus.wait');
    expect(second.finished().map(traceOf)).toEqual(second.finished().map(() => traceOf(root)));
    expect(resumed.parentSpanContext).toMatchObject({ traceId: traceOf(root), spanId: idOf(root), isRemote: true });
    expect(wait.parentSpanContext?.spanId).toBe(idOf(root));
    expect(nanos(wait.startTime)).toBe(BigInt(Date.parse(anHourBefore)) * 1_000_000n);
    expect(wait.attributes['openmanus.wait.for']).toBe('approval');
    expect(first.finished().filter((s) => s.name === 'openmanus.wait')).toEqual([]);
  });

  it('pausing again makes a chain in the one trace: each resumed run under the one it resumed', async () => {
    const spans = collector();
    const llm = scriptedLlm([deployTo('staging'), deployTo('production'), { content: 'Both deployed.' }]);
    const { outcome: first, link: firstLink, input } = await pausedDeploy(spans, llm);
    const second = await traced(
      spans,
      ops,
      (o) => resumeWith(ops, first.state, approve(input.effectId), o),
      { llm, approvals },
      { continues: firstLink },
    );
    expect(second.outcome.status).toBe('awaiting_approval');
    const [next] = second.outcome.pending;
    const third = await traced(
      spans,
      ops,
      (o) => resumeWith(ops, second.outcome.state, approve(next?.effectId ?? ''), o),
      { llm, approvals },
      { continues: second.link },
    );
    expect(third.outcome.status).toBe('finished');

    const legs = spans.byName('invoke_agent ops');
    const waits = spans.byName('openmanus.wait');
    expect(legs).toHaveLength(3);
    expect(waits).toHaveLength(2);
    expect(new Set(spans.finished().map(traceOf)).size).toBe(1);
    expect(legs[0]?.parentSpanContext).toBeUndefined();
    for (const i of [1, 2]) {
      const parent = idOf(legs[i - 1] as ReadableSpan);
      expect(legs[i]?.parentSpanContext?.spanId).toBe(parent);
      expect(waits[i - 1]?.parentSpanContext?.spanId).toBe(parent);
    }
  });
});

describe('a run paused on ask_human and resumed', () => {
  it('is one trace with a wait for a person, and records neither the question nor the answer', async () => {
    const spans = collector();
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'ask_human', arguments: { inquire: QUESTION } }] },
      { content: 'Three days from Kyoto, then.' },
    ]);
    const { outcome: paused, link } = await traced(spans, planner, (o) => run(planner, 'Plan my trip', o), { llm });
    expect(paused.status).toBe('awaiting_human');
    expect(link?.waitingFor).toBe('human');
    const [input] = paused.pending;
    if (input?.kind !== 'human') throw new Error('expected a question');

    const answer: AgentEvent = { type: 'humanReplied', effectId: input.effectId, answer: ANSWER };
    const { outcome: done } = await traced(
      spans,
      planner,
      (o) => resumeWith(planner, paused.state, answer, o),
      { llm },
      { continues: link },
    );

    expect(done.status).toBe('finished');
    const [root, resumed] = spans.byName('invoke_agent planner');
    expect(resumed?.parentSpanContext?.spanId).toBe(root && idOf(root));
    expect(spans.one('openmanus.wait').attributes).toEqual({
      'openmanus.wait.for': 'human',
      'openmanus.wait.resumed_by': 'humanReplied',
      'openmanus.effect.id': input.effectId,
      'openmanus.run.id': paused.runId,
    });
    const text = allAttributeText(spans.finished());
    expect(text).not.toContain(QUESTION);
    expect(text).not.toContain(ANSWER);
  });
});

describe('resuming without a link, or with one that is not a trace link', () => {
  it('without a link the resumed run is a trace of its own, with no wait span', async () => {
    const spans = collector();
    const llm = scriptedLlm([deployTo('production'), { content: 'Deployed.' }]);
    const { outcome: paused, input, root } = await pausedDeploy(spans, llm);
    await traced(spans, ops, (o) => resumeWith(ops, paused.state, approve(input.effectId), o), { llm, approvals });

    const [, resumed] = spans.byName('invoke_agent ops');
    expect(resumed?.parentSpanContext).toBeUndefined();
    expect(resumed && traceOf(resumed)).not.toBe(traceOf(root));
    expect(spans.byName('openmanus.wait')).toEqual([]);
  });

  it('a malformed or hostile link starts a new trace, records nothing of it, warns, and never throws', async () => {
    const spans = collector();
    const llm = scriptedLlm([deployTo('production'), ...Array.from({ length: 20 }, () => ({ content: 'Done.' }))]);
    const { outcome: paused, link, input, root } = await pausedDeploy(spans, llm);
    const MARK = 'HOSTILE';
    const hostile: unknown[] = [
      null,
      'not an object',
      [link.traceparent, link.pausedAt],
      { ...link, traceparent: `00-${MARK}-${link.traceparent.slice(3)}` },
      { ...link, traceparent: link.traceparent.toUpperCase() },
      { ...link, traceparent: `01${link.traceparent.slice(2)}` },
      { ...link, traceparent: `00-${'0'.repeat(32)}-${idOf(root)}-01` },
      { ...link, traceparent: `00-${traceOf(root)}-${'0'.repeat(16)}-01` },
      { ...link, traceparent: `${link.traceparent}-${MARK}` },
      { ...link, traceparent: link.traceparent + MARK.repeat(250_000) },
      { ...link, traceparent: 42 },
      { ...link, pausedAt: `yesterday ${MARK}` },
      { ...link, pausedAt: '2026-13-45T99:99:99Z' },
      { ...link, pausedAt: Date.now() },
      { ...link, pausedAt: `${link.pausedAt}${MARK.repeat(100)}` },
      { ...link, waitingFor: MARK.repeat(250_000) },
      { ...link, waitingFor: `<script>${MARK}</script>` },
      { ...link, waitingFor: { toString: () => MARK } },
      Object.defineProperty({ ...link }, 'traceparent', {
        get: () => {
          throw new Error(MARK);
        },
      }),
      new Proxy(
        {},
        {
          get: () => {
            throw new Error(MARK);
          },
        },
      ),
    ];
    const warnings: string[] = [];
    diag.setLogger(
      {
        verbose: () => {},
        debug: () => {},
        info: () => {},
        warn: (message) => void warnings.push(message),
        error: (message) => void warnings.push(`error: ${message}`),
      },
      DiagLogLevel.WARN,
    );
    try {
      for (const value of hostile) {
        expect(parseTraceLink(value)).toBeUndefined();
        const { outcome } = await traced(
          spans,
          ops,
          (o) => resumeWith(ops, paused.state, approve(input.effectId), o),
          { llm, approvals },
          { continues: value as TraceLink },
        );
        expect(outcome.status).toBe('finished');
      }
    } finally {
      diag.disable();
    }

    const resumed = spans.byName('invoke_agent ops').slice(1);
    expect(resumed).toHaveLength(hostile.length);
    for (const span of resumed) {
      expect(span.parentSpanContext).toBeUndefined();
      expect(traceOf(span)).not.toBe(traceOf(root));
    }
    expect(spans.byName('openmanus.wait')).toEqual([]);
    expect(allAttributeText(spans.finished())).not.toContain(MARK);
    expect(warnings).toEqual(
      hostile.map(() => '@openmanus/tracing: `continues` is not a trace link; the resumed run starts a new trace'),
    );
    expect(warnings.join('\n')).not.toContain(MARK);
    // The untouched link still reads back as itself.
    expect(parseTraceLink(JSON.parse(JSON.stringify(link)))).toEqual(link);
  });

  it('a link paused "later" than now (another machine’s clock ahead) gives a wait of no length, not one ending before it starts', async () => {
    const spans = collector();
    const llm = scriptedLlm([deployTo('production'), { content: 'Deployed.' }]);
    const { outcome: paused, link, input } = await pausedDeploy(spans, llm);
    const ahead = { ...link, pausedAt: new Date(Date.now() + 60_000).toISOString() };
    await traced(
      spans,
      ops,
      (o) => resumeWith(ops, paused.state, approve(input.effectId), o),
      { llm, approvals },
      {
        continues: ahead,
      },
    );
    const wait = spans.one('openmanus.wait');
    const [, resumed] = spans.byName('invoke_agent ops');
    expect(nanos(wait.endTime)).toBe(nanos(wait.startTime));
    expect(nanos(wait.startTime)).toBeLessThanOrEqual(nanos(resumed?.startTime ?? [0, 0]));
  });
});

/** Enough of a context manager to make a span active around a synchronous call (the SDK's needs async hooks). */
function stackContextManager(): ContextManager {
  let current: Context = ROOT_CONTEXT;
  const manager: ContextManager = {
    active: () => current,
    with(ctx, fn, thisArg, ...args) {
      const before = current;
      current = ctx;
      try {
        return fn.call(thisArg, ...args);
      } finally {
        current = before;
      }
    },
    bind: (_ctx, target) => target,
    enable: () => manager,
    disable: () => {
      current = ROOT_CONTEXT;
      return manager;
    },
  };
  return manager;
}

describe('a run resumed in a host', () => {
  it('links the resumed run to the span it was resumed in (the request that answered), which is another trace', async () => {
    const spans = collector();
    const llm = scriptedLlm([deployTo('production'), { content: 'Deployed.' }]);
    const { outcome: paused, link, input, root } = await pausedDeploy(spans, llm);
    const request = spans.provider.getTracer('http').startSpan('POST /runs/:id/approve');
    context.setGlobalContextManager(stackContextManager());
    let options: RunOptions;
    try {
      options = context.with(trace.setSpan(context.active(), request), () =>
        withTracing(ops, { llm, approvals }, { tracer: spans.provider.getTracer('test'), continues: link }),
      );
    } finally {
      context.disable();
    }
    await resumeWith(ops, paused.state, approve(input.effectId), options);
    request.end();

    const [, resumed] = spans.byName('invoke_agent ops');
    expect(resumed?.parentSpanContext?.spanId).toBe(idOf(root));
    expect(resumed?.links.map((l) => l.context.spanId)).toEqual([request.spanContext().spanId]);
  });
});

describe('onPause', () => {
  it('is not called for a run that finishes, nor without a tracer provider; one that throws does not stop the run', async () => {
    const spans = collector();
    const finished = await traced(spans, ops, (o) => run(ops, 'Say hi', o), {
      llm: scriptedLlm([{ content: 'Hi.' }]),
    });
    expect(finished.outcome.status).toBe('finished');
    expect(finished.link).toBeUndefined();

    // No provider: the global API's spans have no context to link to.
    const links: TraceLink[] = [];
    const untraced = await run(
      ops,
      'Deploy the site',
      withTracing(ops, { llm: scriptedLlm([deployTo('production')]), approvals }, { onPause: (l) => links.push(l) }),
    );
    expect(untraced.status).toBe('awaiting_approval');
    expect(links).toEqual([]);

    const throwing = collector();
    const outcome = await run(
      ops,
      'Deploy the site',
      withTracing(
        ops,
        { llm: scriptedLlm([deployTo('production')]), approvals },
        {
          tracer: throwing.provider.getTracer('test'),
          onPause: () => {
            throw new Error('the host’s store is down');
          },
        },
      ),
    );
    expect(outcome.status).toBe('awaiting_approval');
    expect(throwing.started.every((s) => s.ended)).toBe(true);
  });
});
