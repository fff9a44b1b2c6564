import { isSpanContextValid, type SpanContext, TraceFlags } from '@opentelemetry/api';

/**
 * Where a paused run's trace stands, as plain JSON: kept by the host with the paused state, and
 * given back as `continues` when the run is resumed (in this process or another), so that the
 * resumed run is part of the same trace, with a span for the wait.
 */
export interface TraceLink {
  /** The paused run's span, as a W3C `traceparent` (`00-{trace id}-{span id}-{flags}`). */
  readonly traceparent: string;
  /** When the run paused, as an ISO 8601 time. */
  readonly pausedAt: string;
  /** What it waits for: `approval` or `human`. */
  readonly waitingFor?: string;
}

// Only what this package writes is read back: version 00, lowercase hex, nothing more (anchored, so a
// huge string fails at once).
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const WAITING_FOR = /^[a-z][a-z0-9_.-]{0,63}$/i;

/** A stored link checked whole, or `undefined` when it is not one this package wrote (any part malformed). */
export function parseTraceLink(value: unknown): TraceLink | undefined {
  try {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    const { traceparent, pausedAt, waitingFor } = value as Record<string, unknown>;
    if (typeof traceparent !== 'string' || !spanContextOf(traceparent)) return undefined;
    if (typeof pausedAt !== 'string' || !ISO_TIME.test(pausedAt)) return undefined;
    if (!Number.isFinite(Date.parse(pausedAt))) return undefined;
    if (waitingFor !== undefined && (typeof waitingFor !== 'string' || !WAITING_FOR.test(waitingFor))) return undefined;
    return { traceparent, pausedAt, ...(waitingFor !== undefined ? { waitingFor } : {}) };
  } catch {
    // A getter or proxy that throws is as malformed as the rest.
    return undefined;
  }
}

/** The remote span context a `traceparent` names, or `undefined` when it is malformed or all zeros. */
export function spanContextOf(traceparent: string): SpanContext | undefined {
  const match = TRACEPARENT.exec(traceparent);
  if (!match) return undefined;
  const [, traceId = '', spanId = '', flags = ''] = match;
  const context: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
  return isSpanContextValid(context) ? context : undefined;
}

/** A span context as a `traceparent`; its sampled flag goes along, so a resumed run is sampled as its start was. */
export const traceparentOf = (context: SpanContext): string =>
  `00-${context.traceId}-${context.spanId}-0${context.traceFlags & TraceFlags.SAMPLED ? '1' : '0'}`;
