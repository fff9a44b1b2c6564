export { createRunTracer, type TracedRun, type TracingOptions } from './runTracer.js';
export { ERROR_TYPE, GEN_AI, type GenAiOperation, OPENMANUS } from './semconv.js';
export { parseTraceLink, type TraceLink } from './traceLink.js';
export { VERSION } from './version.js';
export { withTracing } from './withTracing.js';
