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

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
const FENCE = '```';

/**
 * Splits a reply into its text and the tool calls written in it. A model's reply is untrusted
 * input: it is scanned with `indexOf` in one pass (no backtracking pattern), so time is linear
 * in its length whatever it holds. Each opening pairs with the first closing after it.
 */
export function parseToolCalls(text: string): {
  content: string;
  toolCalls: ToolCall[];
} {
  const toolCalls: ToolCall[] = [];
  const parts: string[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf(OPEN, from);
    if (open < 0) break;
    const close = text.indexOf(CLOSE, open + OPEN.length);
    if (close < 0) break;
    parts.push(text.slice(from, open));
    toolCalls.push(toolCall(unfence(text.slice(open + OPEN.length, close).trim()), toolCalls.length));
    from = close + CLOSE.length;
  }
  parts.push(text.slice(from));
  return { content: parts.join('').trim(), toolCalls };
}

/** A block's body without a Markdown fence around it (```json ... ```). */
function unfence(body: string): string {
  let json = body;
  if (json.startsWith(FENCE)) {
    json = json.slice(FENCE.length);
    if (json.startsWith('json')) json = json.slice('json'.length);
    json = json.trimStart();
  }
  if (json.endsWith(FENCE)) json = json.slice(0, -FENCE.length).trimEnd();
  return json;
}

function toolCall(json: string, index: number): ToolCall {
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
    name = looseName(json) ?? 'unknown';
  }
  return { id: `call_${index}`, name, arguments: args };
}

/** The first `"name": "<non-empty>"` in text that is not JSON; every character is looked at a bounded number of times. */
function looseName(text: string): string | undefined {
  const key = '"name"';
  for (let at = text.indexOf(key); at >= 0; at = text.indexOf(key, at + 1)) {
    let i = skipSpace(text, at + key.length);
    if (text[i] !== ':') continue;
    i = skipSpace(text, i + 1);
    if (text[i] !== '"') continue;
    const end = text.indexOf('"', i + 1);
    if (end < 0) return undefined;
    if (end > i + 1) return text.slice(i + 1, end);
  }
  return undefined;
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  return i;
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
