import type { Effect } from '../kernel/effects.js';
import type { AgentEvent } from '../kernel/events.js';
import type { ImageData } from '../kernel/messages.js';
import type { LlmPort } from '../llm/llm.js';
import { err, ok, type Result } from '../result.js';
import type { Tool, ToolOutput, ToolReturn, ToolSuspension } from '../tools/defineTool.js';
import { linkAbort } from './abort.js';
import type { RunScope, ToolScope } from './scope.js';

export type CallToolEffect = Extract<Effect, { type: 'callTool' }>;
export type ToolEvent = Extract<AgentEvent, { type: 'toolCompleted' | 'toolSuspended' }>;

export interface ToolCallOptions {
  /** Time limit when the tool has none of its own (default 120 s). */
  readonly toolTimeoutMs?: number;
  /** The tool's per-run data, as the state holds it. */
  readonly data?: unknown;
  /** Names of the tools the model may call now, for the message when this one has gone. */
  readonly available?: readonly string[];
  /** Records the call's progress in the run (a `toolProgressed` event), with the usage spent since the last report. */
  readonly saveProgress?: (progress: unknown, usage?: Usage) => void;
}

export type Usage = { inputTokens: number; outputTokens: number; llmCalls: number };

/** Runs one tool call; whatever goes wrong becomes an observation for the model. */
export async function executeTool(
  effect: CallToolEffect,
  tool: Tool | undefined,
  run: RunScope,
  options: ToolCallOptions = {},
): Promise<ToolEvent> {
  const { call } = effect;
  const usage: Usage = { inputTokens: 0, outputTokens: 0, llmCalls: 0 };
  // Usage is reported as it is spent (with progress, then with the result), each call once.
  const unreported = (): { usage?: Usage } => {
    if (usage.llmCalls === 0 && usage.inputTokens === 0 && usage.outputTokens === 0) return {};
    const spent = { ...usage };
    usage.inputTokens = 0;
    usage.outputTokens = 0;
    usage.llmCalls = 0;
    return { usage: spent };
  };
  let data: { value: unknown } | undefined;
  const completed = (output: string, isError: boolean, image?: ImageData, brief?: string): ToolEvent => ({
    type: 'toolCompleted',
    effectId: effect.id,
    output,
    ...(isError ? { isError } : {}),
    ...(image ? { image } : {}),
    ...(brief !== undefined ? { brief } : {}),
    ...unreported(),
    ...(data ? { data: data.value } : {}),
  });
  if (!tool) {
    const available = options.available?.join(', ') || 'none';
    return completed(`Error: the tool '${call.name}' is not available. Available tools: ${available}.`, true);
  }
  let parsed: ReturnType<Tool['parse']>;
  try {
    parsed = tool.parse(effect.args);
  } catch (error) {
    // zod's safeParse lets an exception from a transform or refine through: it is still bad input.
    parsed = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (!parsed.ok) return completed(`Error: invalid arguments for ${call.name}:\n${parsed.error}`, true);

  const timeoutMs = effect.timeoutMs ?? options.toolTimeoutMs ?? 120_000;
  const link = linkAbort(run.signal, timeoutMs);
  const stopped = () =>
    link.timedOut()
      ? completed(`Error: ${call.name} timed out after ${timeoutMs} ms and was stopped.`, true)
      : completed(`Error: ${call.name} was cancelled.`, true);
  const scope: ToolScope = {
    runId: run.runId,
    get signal() {
      return link.signal;
    },
    ...(run.workspace !== undefined ? { workspace: run.workspace } : {}),
    ...(run.onHuman ? { onHuman: run.onHuman } : {}),
    ...(run.onApproval ? { onApproval: run.onApproval } : {}),
    llm: meteredLlm(run.llm, usage),
    resource: run.resource,
    ...(run.sandbox ? { sandbox: run.sandbox } : {}),
    emit: (item, child) =>
      run.emit({ ...item, origin: [{ tool: call.name, effectId: effect.id, ...child }, ...(item.origin ?? [])] }),
    changeTools: run.changeTools,
    ...(run.takesDeltas ? { takesDeltas: run.takesDeltas } : {}),
    callId: call.id,
    effectId: effect.id,
    ...(effect.progress !== undefined ? { progress: effect.progress } : {}),
    ...(effect.answer ? { answer: effect.answer } : {}),
    saveProgress: (progress) => options.saveProgress?.(progress, unreported().usage),
    data: options.data,
    setData: (value) => {
      data = { value };
    },
    addUsage: (more) => {
      usage.inputTokens += more.inputTokens;
      usage.outputTokens += more.outputTokens;
      usage.llmCalls += more.llmCalls;
    },
  };
  try {
    const returned = await Promise.race([
      Promise.resolve(tool.execute(parsed.value, scope)),
      link.stopped.then((): typeof halted => halted),
    ]);
    if (returned === halted) return stopped();
    if (isSuspension(returned)) {
      const { progress, waiting } = returned.suspend;
      return { type: 'toolSuspended', effectId: effect.id, progress, waiting, ...unreported() };
    }
    const result = toolOutputOf(returned);
    if (!result.ok) return completed(`Error: ${result.error}`, true);
    const { output, image, brief, isError } = result.value;
    if (isError) return completed(`Error: ${output}`, true, image, brief);
    return completed(output === '' && !image ? `${call.name} completed with no output.` : output, false, image, brief);
  } catch (error) {
    // A tool that rejects from its own abort listener is still reported as the timeout or cancel it was.
    if (link.timedOut() || run.signal.aborted) return stopped();
    return completed(`Error: ${call.name} failed: ${error instanceof Error ? error.message : String(error)}`, true);
  } finally {
    link.dispose();
  }
}

const halted: unique symbol = Symbol('halted');

/** The run's LLM port as a tool sees it: the same model, with the tool's calls counted. */
function meteredLlm(llm: LlmPort, usage: Usage): LlmPort {
  return {
    model: llm.model,
    complete: async (request, callOptions) => {
      const result = await llm.complete(request, callOptions);
      usage.llmCalls++;
      if (result.ok && result.value.usage) {
        usage.inputTokens += result.value.usage.inputTokens;
        usage.outputTokens += result.value.usage.outputTokens;
      }
      return result;
    },
  };
}

const isSuspension = (returned: ToolReturn): returned is ToolSuspension =>
  typeof returned === 'object' && 'suspend' in returned;

/** What a tool returned, in one shape: its output, or the error the model is shown. */
export function toolOutputOf(returned: Exclude<ToolReturn, ToolSuspension>): Result<ToolOutput, string> {
  if (typeof returned === 'string') return ok({ output: returned });
  if ('ok' in returned) {
    if (!returned.ok) return err(returned.error instanceof Error ? returned.error.message : returned.error);
    return ok(typeof returned.value === 'string' ? { output: returned.value } : returned.value);
  }
  return ok(returned);
}
