// A real OpenTelemetry SDK tracer whose spans land in memory, and the span tree as text.
import type { Context } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export interface Collector {
  readonly provider: BasicTracerProvider;
  /** Every span that was started, ended or not. */
  readonly started: readonly Span[];
  /** The spans that ended, in the order they ended. */
  finished(): readonly ReadableSpan[];
  byName(name: string): readonly ReadableSpan[];
  one(name: string): ReadableSpan;
  childrenOf(span: ReadableSpan): readonly ReadableSpan[];
  /** The finished spans under `root` as indented names, children in the order they started. */
  tree(root?: ReadableSpan): string;
}

export function collector(): Collector {
  const exporter = new InMemorySpanExporter();
  const started: Span[] = [];
  const watcher: SpanProcessor = {
    onStart: (span: Span, _context: Context) => void started.push(span),
    onEnd: () => {},
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const provider = new BasicTracerProvider({ spanProcessors: [watcher, new SimpleSpanProcessor(exporter)] });
  const finished = () => exporter.getFinishedSpans();
  const byName = (name: string) => finished().filter((s) => s.name === name);
  // Start times have millisecond precision: the order spans started in is the processor's.
  const order = (spans: readonly ReadableSpan[]) =>
    [...spans].sort((a, b) => started.indexOf(a as Span) - started.indexOf(b as Span));
  const childrenOf = (span: ReadableSpan) =>
    order(finished().filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId));
  const render = (span: ReadableSpan, depth: number): string[] => [
    `${'  '.repeat(depth)}${span.name}`,
    ...childrenOf(span).flatMap((child) => render(child, depth + 1)),
  ];
  return {
    provider,
    started,
    finished,
    byName,
    one(name) {
      const spans = byName(name);
      if (spans.length !== 1) throw new Error(`expected one span "${name}", found ${spans.length}`);
      return spans[0] as ReadableSpan;
    },
    childrenOf,
    tree(root) {
      const roots = root ? [root] : order(finished().filter((s) => s.parentSpanContext === undefined));
      return roots.flatMap((span) => render(span, 0)).join('\n');
    },
  };
}
