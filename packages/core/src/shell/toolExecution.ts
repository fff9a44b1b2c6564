import type { Effect } from '../kernel/effects.js';
import type { AgentEvent } from '../kernel/events.js';
import type { ImageData } from '../kernel/messages.js';
import { addUsage, emptyUsage, type Usage } from '../kernel/state.js';
import type { ToolContent } from '../kernel/toolContent.js';
import { type LlmPort, llmAnswerOf, portComplete } from '../llm/llm.js';
import { err, ok, type Result, resultOf } from '../result.js';
import type { Tool, ToolOutput, ToolReturn, ToolSuspension } from '../tools/defineTool.js';
import { type AbortLink, linkAbort } from './abort.js';
import type { ItemOrigin, RunItem } from './runItems.js';
import { hostCallbacksOf, type RunScope, type ToolScope } from './scope.js';
import type {
  ElicitationRequest,
  ElicitationResult,
  LogLevel,
  SamplingRequest,
  SamplingResult,
  ToolProgress,
} from './toolRequests.js';
import { sampleRunModel } from './toolSampling.js';

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

/** Runs one tool call; whatever goes wrong becomes an observation for the model. */
export async function executeTool(
  effect: CallToolEffect,
  tool: Tool | undefined,
  run: RunScope,
  options: ToolCallOptions = {},
): Promise<ToolEvent> {
  const { call } = effect;
  const ledger = new CallLedger(effect, run.llm);
  if (!tool) {
    const available = options.available?.join(', ') || 'none';
    return ledger.completed(`Error: the tool '${call.name}' is not available. Available tools: ${available}.`, true);
  }
  const parsed = parseArguments(tool, call.name, effect.args);
  if (!parsed.isOk()) return ledger.completed(parsed.error, true);

  const timeoutMs = effect.timeoutMs ?? options.toolTimeoutMs ?? 120_000;
  let halt: ((value: typeof halted) => void) | undefined;
  const link = linkAbort(run.signal, timeoutMs, () => halt?.(halted));
  ledger.link = link;
  const stopped = () =>
    link.timedOut()
      ? ledger.completed(`Error: ${call.name} timed out after ${timeoutMs} ms and was stopped.`, true)
      : ledger.completed(`Error: ${call.name} was cancelled.`, true);
  try {
    const running: ToolReturn | PromiseLike<ToolReturn> = tool.execute(parsed.value, toolScope(run, ledger, options));
    // Whichever comes first, the tool's answer or the stop (one promise, no race of two).
    const returned = isThenable(running)
      ? await new Promise<ToolReturn | typeof halted>((resolve, reject) => {
          halt = resolve;
          if (link.isStopped) resolve(halted);
          running.then(resolve, reject);
        })
      : running;
    if (returned === halted) return stopped();
    if (isSuspension(returned)) {
      const { progress, waiting } = returned.suspend;
      const usage = ledger.takeUsage();
      return { type: 'toolSuspended', effectId: effect.id, progress, waiting, ...(usage ? { usage } : {}) };
    }
    const result = toolOutputOf(returned);
    if (!result.isOk()) return ledger.completed(`Error: ${result.error}`, true);
    const { output, image, brief, isError, content, structured } = result.value;
    if (content) ledger.content = content;
    if (structured) ledger.structured = structured;
    if (isError) return ledger.completed(`Error: ${output}`, true, image, brief);
    return ledger.completed(
      output === '' && !image ? `${call.name} completed with no output.` : output,
      false,
      image,
      brief,
    );
  } catch (error) {
    // A tool that rejects from its own abort listener is still reported as the timeout or cancel it was.
    if (link.timedOut() || run.signal.aborted) return stopped();
    return ledger.completed(
      `Error: ${call.name} failed: ${error instanceof Error ? error.message : String(error)}`,
      true,
    );
  } finally {
    link.dispose();
  }
}

/** A call's arguments as the tool takes them, or the error the model is answered with. */
export function parseArguments(tool: Tool, name: string, args: unknown): Result<unknown, string> {
  let parsed: Result<unknown, unknown>;
  try {
    // A hand-written tool's parse may answer with the 0.1 result shape (see resultOf).
    parsed = resultOf(tool.parse(args)) ?? err('the tool could not read its arguments (its parse returned no Result)');
  } catch (error) {
    // zod's safeParse lets an exception from a transform or refine through: it is still bad input.
    parsed = err(error instanceof Error ? error.message : String(error));
  }
  return parsed.isOk() ? ok(parsed.value) : err(`Error: invalid arguments for ${name}:\n${String(parsed.error)}`);
}

const halted: unique symbol = Symbol('halted');

/** One call's bookkeeping: the model use it has not reported yet, the data it set, its link. */
class CallLedger {
  usage: Usage = emptyUsage;
  data: { value: unknown } | undefined;
  link: AbortLink | undefined;
  /** Clocks of the tool's own that stop while the call waits on a person (`scope.onPersonWait`). */
  readonly personWatchers = new Set<() => () => void>();
  /** The result's parts and structured form, when the tool gave them (for MCP clients). */
  content: readonly ToolContent[] | undefined;
  structured: { readonly [key: string]: unknown } | undefined;
  private metered: LlmPort | undefined;

  constructor(
    readonly effect: CallToolEffect,
    private readonly runLlm: LlmPort,
  ) {}

  /** The run's model as this call sees it: its calls counted here (made when the tool first asks). */
  get llm(): LlmPort {
    if (!this.metered) this.metered = meteredLlm(this.runLlm, this);
    return this.metered;
  }

  /** A person's answer (`wait`): the call's time limit, and its watchers' clocks, stop meanwhile. */
  async waitOnPerson<T>(wait: () => T | PromiseLike<T>): Promise<T> {
    const resumes = [this.link?.pause(), ...Array.from(this.personWatchers, (watch) => watch())];
    try {
      return await wait();
    } finally {
      for (const resume of resumes) resume?.();
    }
  }

  add(more: Usage): void {
    this.usage = addUsage(this.usage, more);
  }

  /** Usage is reported as it is spent (with progress, then with the result), each call once. */
  takeUsage(): Usage | undefined {
    const { usage } = this;
    if (usage.llmCalls === 0 && usage.inputTokens === 0 && usage.outputTokens === 0) return undefined;
    this.usage = emptyUsage;
    return usage;
  }

  completed(output: string, isError: boolean, image?: ImageData, brief?: string): ToolEvent {
    const event: { -readonly [K in keyof ToolCompleted]: ToolCompleted[K] } = {
      type: 'toolCompleted',
      effectId: this.effect.id,
      output,
    };
    // Keys added only when there is something to say (most calls: none of them).
    if (isError) event.isError = true;
    if (image) event.image = image;
    if (brief !== undefined) event.brief = brief;
    const usage = this.takeUsage();
    if (usage) event.usage = usage;
    if (this.data) event.data = this.data.value;
    if (this.content) event.content = this.content;
    if (this.structured) event.structured = this.structured;
    return event;
  }
}

type ToolCompleted = Extract<ToolEvent, { type: 'toolCompleted' }>;

/** What the call's tool gets: the run's scope with its own signal, model meter, progress and data. */
function toolScope(run: RunScope, ledger: CallLedger, options: ToolCallOptions): ToolScope {
  const { effect } = ledger;
  const { call } = effect;
  const { onElicitation, onSampling, relay } = run;
  return {
    runId: run.runId,
    resource: run.resource,
    changeTools: run.changeTools,
    ...(run.workspace !== undefined ? { workspace: run.workspace } : {}),
    ...hostCallbacksOf(run),
    ...(run.sandbox ? { sandbox: run.sandbox } : {}),
    ...(run.takesDeltas ? { takesDeltas: run.takesDeltas } : {}),
    emit: (item: RunItem, child?: Pick<ItemOrigin, 'agent' | 'model'>) =>
      run.emit({ ...item, origin: [{ tool: call.name, effectId: effect.id, ...child }, ...(item.origin ?? [])] }),
    callId: call.id,
    effectId: effect.id,
    ...(effect.progress !== undefined ? { progress: effect.progress } : {}),
    ...(effect.answer ? { answer: effect.answer } : {}),
    saveProgress: (progress: unknown) => options.saveProgress?.(progress, ledger.takeUsage()),
    data: options.data,
    setData: (value: unknown) => {
      ledger.data = { value };
    },
    addUsage: (more: Usage) => ledger.add(more),
    ...(run.relay ? { relay: run.relay } : {}),
    reportProgress: (progress: ToolProgress) =>
      run.emit({ type: 'progress', effectId: effect.id, tool: call.name, ...progress }),
    log: (level: LogLevel, data: unknown, logger?: string) =>
      run.emit({ type: 'log', effectId: effect.id, tool: call.name, level, data, ...(logger ? { logger } : {}) }),
    // Not answered at all is "dismissed": the tool goes on knowing nobody said yes.
    // A relayed question waits on the MCP client's person as the host's does on its own.
    elicit: async (request: ElicitationRequest): Promise<ElicitationResult> =>
      relay
        ? ledger.waitOnPerson(() => relay.elicit(request, call))
        : onElicitation
          ? ledger.waitOnPerson(() => onElicitation(request, call))
          : { action: 'cancel' },
    // The host's approval waits on a person; the model's completion after it is work, and counts.
    sample: (request: SamplingRequest): Promise<SamplingResult> =>
      relay
        ? ledger.waitOnPerson(() => relay.sample(request, call))
        : sampleRunModel(
            request,
            call,
            onSampling ? { onSampling: (asked, by) => ledger.waitOnPerson(() => onSampling(asked, by)) } : {},
            ledger.llm,
            ledger.link?.signal ?? run.signal,
          ),
    onPersonWait: (watch: () => () => void) => {
      ledger.personWatchers.add(watch);
      return () => ledger.personWatchers.delete(watch);
    },
    // Live: the call's signal and model meter change as the call runs.
    get signal() {
      return ledger.link?.signal as AbortSignal;
    },
    get llm() {
      return ledger.llm;
    },
  };
}

/** The run's LLM port as a tool sees it: the same model, with the tool's calls counted. */
function meteredLlm(llm: LlmPort, ledger: CallLedger): LlmPort {
  return {
    model: llm.model,
    complete: portComplete(async (request, callOptions) => {
      const result = llmAnswerOf(await llm.complete(request, callOptions));
      const usage = result.isOk() ? result.value.usage : undefined;
      // A reply without usage still was a call: counted, its cost unknown.
      ledger.add({ inputTokens: 0, outputTokens: 0, ...usage, llmCalls: 1 });
      return result;
    }),
  };
}

// Any thenable, as `await` takes one (a tool may return another library's promise).
const isThenable = <T>(value: T | PromiseLike<T>): value is PromiseLike<T> =>
  typeof (value as { then?: unknown } | null)?.then === 'function';

const isSuspension = (returned: ToolReturn): returned is ToolSuspension =>
  typeof returned === 'object' && 'suspend' in returned;

/**
 * What a tool returned, in one shape: its output, or the error the model is shown. A result is
 * recognised by its methods, so one made by another copy of neverthrow counts; so does the plain
 * `{ ok, value | error }` object of 0.1 (see `resultOf`).
 */
export function toolOutputOf(returned: Exclude<ToolReturn, ToolSuspension>): Result<ToolOutput, string> {
  if (typeof returned === 'string') return ok({ output: returned });
  const result = resultOf(returned) as Result<string | ToolOutput, string | Error> | undefined;
  if (!result) return ok(returned as ToolOutput);
  if (result.isErr()) return err(result.error instanceof Error ? result.error.message : String(result.error));
  return ok(typeof result.value === 'string' ? { output: result.value } : result.value);
}
