import { assistantMessage, type Message, systemMessage, type ToolCall, userMessage } from '../kernel/messages.js';
import type { ToolSpec } from '../kernel/tool.js';
import { type LlmPort, llmAnswerOf } from '../llm/llm.js';
import type { HostCallbacks } from './scope.js';
import type {
  SamplingContent,
  SamplingMessage,
  SamplingRequest,
  SamplingResult,
  SamplingTool,
  SamplingToolUse,
} from './toolRequests.js';

/** MCP's names for why a reply ended, where it has one. */
const STOP_REASONS: Partial<Record<string, string>> = { stop: 'endTurn', length: 'maxTokens', tool_calls: 'toolUse' };

type Decision = Awaited<ReturnType<NonNullable<HostCallbacks['onSampling']>>>;

const refusal = (decision: Decision | undefined): string | undefined => {
  if (decision === undefined) return 'sampling needs the host to approve it (onSampling), and this host does not';
  if (decision === true) return undefined;
  if (decision === false) return 'the host refused the sampling request';
  return decision.approved
    ? undefined
    : `the host refused the sampling request${decision.reason ? `: ${decision.reason}` : ''}`;
};

const note = (block: SamplingContent) =>
  block.type === 'image' || block.type === 'audio'
    ? `[${block.type} (${block.mimeType}) left out: this model takes none here]`
    : `[${block.type} left out]`;

const textOf = (blocks: readonly SamplingContent[]) =>
  blocks.map((block) => (block.type === 'text' ? block.text : note(block))).join('\n');

/**
 * A sampling message as the model's messages: text and images as a user's or the assistant's
 * words, `tool_use` blocks as the assistant's tool calls, `tool_result` blocks as the tool messages
 * that answer them (named after the calls `names` has seen). Audio it is told about, since ports take none.
 */
function messagesOf(message: SamplingMessage, names: Map<string, string>): Message[] {
  const blocks: readonly SamplingContent[] = Array.isArray(message.content)
    ? message.content
    : [message.content as SamplingContent];
  if (message.role === 'assistant') {
    const calls: ToolCall[] = [];
    const said: SamplingContent[] = [];
    for (const block of blocks) {
      if (block.type === 'tool_result') throw new Error('a tool_result belongs in a user message, not the assistant’s');
      if (block.type === 'tool_use') {
        names.set(block.id, block.name);
        calls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
      } else said.push(block);
    }
    return [assistantMessage(textOf(said), calls)];
  }
  return blocks.map((block): Message => {
    switch (block.type) {
      case 'text':
        return userMessage(block.text);
      case 'image':
        return userMessage('', { base64: block.data, mimeType: block.mimeType });
      case 'tool_use':
        throw new Error('a tool_use belongs in an assistant message, not the user’s');
      case 'tool_result': {
        const image = block.content.find((part) => part.type === 'image');
        const text = textOf(block.content.filter((part) => part !== image));
        return {
          role: 'tool',
          toolCallId: block.toolUseId,
          name: names.get(block.toolUseId) ?? 'tool',
          content: block.isError ? `Error: ${text}` : text,
          ...(image && image.type === 'image' ? { image: { base64: image.data, mimeType: image.mimeType } } : {}),
        };
      }
      default:
        return userMessage(note(block));
    }
  });
}

/** The model's tool calls as `tool_use` blocks; a call of a tool the request did not offer is an error. */
function toolUseOf(calls: readonly ToolCall[], offered: readonly SamplingTool[]): SamplingToolUse[] {
  return calls.map(({ id, name, arguments: text }) => {
    if (!offered.some((tool) => tool.name === name))
      throw new Error(`the model called "${name}", a tool the sampling request did not offer`);
    let input: unknown;
    try {
      input = JSON.parse(text || '{}');
    } catch {
      input = undefined;
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw new Error(`the model called "${name}" with arguments that are not a JSON object`);
    return { type: 'tool_use', id, name, input: input as SamplingToolUse['input'] };
  });
}

/**
 * A tool's sampling request answered by the run's model, once the host approves it: the request's
 * system prompt and messages, and its tools as tools the model may call. The model only asks for
 * such calls: they come back as the result's `toolUse` for the requester to run, and nothing here
 * runs them. `maxTokens`, `temperature` and `stopSequences` are the requester's wishes; the port's
 * own settings apply.
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
  const names = new Map<string, string>();
  const messages = [
    ...(request.systemPrompt ? [systemMessage(request.systemPrompt)] : []),
    ...request.messages.flatMap((message) => messagesOf(message, names)),
  ];
  const offered = request.tools ?? [];
  const tools: ToolSpec[] = offered.map(({ name, description, inputSchema }) => ({
    name,
    description: description ?? '',
    parameters: inputSchema,
  }));
  const toolChoice = tools.length > 0 ? (request.toolChoice ?? 'auto') : 'none';
  const answer = llmAnswerOf(await llm.complete({ messages, tools, toolChoice }, { signal }));
  if (!answer.isOk()) throw new Error(`the model could not answer: ${answer.error.message}`);
  const { content, finishReason, toolCalls } = answer.value;
  const toolUse = tools.length > 0 ? toolUseOf(toolCalls, offered) : [];
  const stopReason = toolUse.length > 0 ? 'toolUse' : finishReason && (STOP_REASONS[finishReason] ?? finishReason);
  return {
    role: 'assistant',
    content: { type: 'text', text: content },
    ...(toolUse.length > 0 ? { toolUse } : {}),
    model: llm.model,
    ...(stopReason ? { stopReason } : {}),
  };
}
