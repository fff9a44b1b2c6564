import { assistantMessage, type Message, systemMessage, type ToolCall, userMessage } from '../kernel/messages.js';
import { type LlmPort, llmAnswerOf } from '../llm/llm.js';
import type { HostCallbacks } from './scope.js';
import type { SamplingMessage, SamplingRequest, SamplingResult } from './toolRequests.js';

/** MCP's names for why a reply ended, where it has one. */
const STOP_REASONS: Partial<Record<string, string>> = { stop: 'endTurn', length: 'maxTokens' };

type Decision = Awaited<ReturnType<NonNullable<HostCallbacks['onSampling']>>>;

const refusal = (decision: Decision | undefined): string | undefined => {
  if (decision === undefined) return 'sampling needs the host to approve it (onSampling), and this host does not';
  if (decision === true) return undefined;
  if (decision === false) return 'the host refused the sampling request';
  return decision.approved
    ? undefined
    : `the host refused the sampling request${decision.reason ? `: ${decision.reason}` : ''}`;
};

// A model reads the text and images; audio it is told about, since ports take no audio.
const messageOf = ({ role, content }: SamplingMessage): Message => {
  if (content.type === 'text') return role === 'user' ? userMessage(content.text) : assistantMessage(content.text);
  if (content.type === 'image' && role === 'user')
    return userMessage('', { base64: content.data, mimeType: content.mimeType });
  const note = `[${content.type} (${content.mimeType}) left out: this model takes none]`;
  return role === 'user' ? userMessage(note) : assistantMessage(note);
};

/**
 * A tool's sampling request answered by the run's model, once the host approves it: the request's
 * system prompt and messages, no tools. `maxTokens`, `temperature` and `stopSequences` are the
 * requester's wishes; the port's own settings apply.
 */
export async function sampleRunModel(
  request: SamplingRequest,
  call: ToolCall,
  host: HostCallbacks,
  llm: LlmPort,
  signal: AbortSignal,
): Promise<SamplingResult> {
  const refused = refusal(host.onSampling ? await host.onSampling(request, call) : undefined);
  if (refused) throw new Error(refused);
  const messages = [
    ...(request.systemPrompt ? [systemMessage(request.systemPrompt)] : []),
    ...request.messages.map(messageOf),
  ];
  const answer = llmAnswerOf(await llm.complete({ messages, tools: [], toolChoice: 'none' }, { signal }));
  if (!answer.isOk()) throw new Error(`the model could not answer: ${answer.error.message}`);
  const { content, finishReason } = answer.value;
  return {
    role: 'assistant',
    content: { type: 'text', text: content },
    model: llm.model,
    ...(finishReason ? { stopReason: STOP_REASONS[finishReason] ?? finishReason } : {}),
  };
}
