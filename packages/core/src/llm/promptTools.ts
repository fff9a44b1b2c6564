import type { ToolChoice } from '../kernel/agent.js';
import type { Message, ToolCall } from '../kernel/messages.js';
import type { ToolSpec } from '../kernel/tool.js';

/**
 * Tool calling for models without native function calling: the tools are described in the
 * system prompt, calls are written as <tool_call>{json}</tool_call> blocks and parsed back.
 */
export function toolsPrompt(tools: readonly ToolSpec[], toolChoice: ToolChoice): string {
  if (tools.length === 0 || toolChoice === 'none') return '';
  const list = tools
    .map((t) => `- ${t.name}: ${t.description}\n  parameters (JSON Schema): ${JSON.stringify(t.parameters)}`)
    .join('\n');
  const must =
    toolChoice === 'required'
      ? 'Every reply must contain at least one tool call.'
      : 'Reply with plain text when no tool is needed.';
  return [
    'You can call these tools:',
    list,
    'To call a tool, write a block like this (one block per call, arguments as a JSON object):',
    '<tool_call>{"name": "tool_name", "arguments": {"param": "value"}}</tool_call>',
    `${must} Tool results come back in <tool_result> blocks.`,
  ].join('\n');
}

const CALL_BLOCK = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;

/** Splits a reply into its text and the tool calls written in it. */
export function parseToolCalls(text: string): {
  content: string;
  toolCalls: ToolCall[];
} {
  const toolCalls: ToolCall[] = [];
  const content = text.replace(CALL_BLOCK, (_block, body: string) => {
    const json = body.replace(/^```(?:json)?\s*|\s*```$/g, '');
    let name = '';
    let args = json;
    try {
      const parsed = JSON.parse(json) as {
        name?: unknown;
        arguments?: unknown;
      };
      if (typeof parsed.name === 'string') name = parsed.name;
      args = typeof parsed.arguments === 'string' ? parsed.arguments : JSON.stringify(parsed.arguments ?? {});
    } catch {
      // Left as raw text: the reducer answers it with a "not valid JSON" observation.
      const match = /"name"\s*:\s*"([^"]+)"/.exec(json);
      name = match?.[1] ?? 'unknown';
    }
    toolCalls.push({ id: `call_${toolCalls.length}`, name, arguments: args });
    return '';
  });
  return { content: content.trim(), toolCalls };
}

/** Rewrites a transcript with native tool messages into plain chat messages. */
export function toPromptMessages(
  messages: readonly Message[],
  tools: readonly ToolSpec[],
  toolChoice: ToolChoice,
): Message[] {
  const out: Message[] = [];
  const addendum = toolsPrompt(tools, toolChoice);
  let systemDone = false;
  for (const message of messages) {
    if (message.role === 'system' && !systemDone) {
      out.push({
        role: 'system',
        content: addendum ? `${message.content}\n\n${addendum}` : message.content,
      });
      systemDone = true;
    } else if (message.role === 'assistant' && message.toolCalls?.length) {
      const blocks = message.toolCalls.map(
        (c) => `<tool_call>{"name": ${JSON.stringify(c.name)}, "arguments": ${c.arguments || '{}'}}</tool_call>`,
      );
      out.push({
        role: 'assistant',
        content: [message.content, ...blocks].filter(Boolean).join('\n'),
      });
    } else if (message.role === 'tool') {
      out.push({
        role: 'user',
        content: `<tool_result name="${message.name}">\n${message.content}\n</tool_result>`,
        ...(message.image ? { image: message.image } : {}),
      });
    } else {
      out.push(message);
    }
  }
  if (!systemDone && addendum) out.unshift({ role: 'system', content: addendum });
  return out;
}
