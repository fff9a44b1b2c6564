import type { AgentConfig } from './agent.js';
import type { RequestAdditions } from './context.js';
import type { LlmRequest } from './effects.js';
import { sentFrom, sentHistory } from './historyWindow.js';
import { type Message, systemMessage, userMessage } from './messages.js';
import type { AgentState } from './state.js';

export const requiredToolNudge =
  'Your last reply had no tool call, but this step requires one. Call one of the available tools now.';

/** The non-empty parts, a blank line between them. */
function joinParts(parts: readonly string[]): string {
  let joined = '';
  for (const part of parts) if (part) joined = joined ? `${joined}\n\n${part}` : part;
  return joined;
}

/** What this step's gathered context adds: providers apply in order, each on the last one's result. */
function contextAdditions(config: AgentConfig, state: AgentState): RequestAdditions {
  let additions: RequestAdditions = { nextStepPrompt: config.nextStepPrompt, messages: [] };
  const gathered = state.context?.gathered;
  if (!gathered) return additions;
  for (const provider of config.contextProviders ?? []) {
    if (provider.name in gathered) additions = provider.apply(gathered[provider.name], additions);
  }
  return additions;
}

// One system message per agent config: every request of a run then starts with the same message,
// whose tokens and wire form are worked out once (messages are immutable, so sharing it is safe).
const systemMessages = new WeakMap<AgentConfig, Message>();
function systemMessageOf(config: AgentConfig, prompt: string): Message {
  let message = systemMessages.get(config);
  if (message?.content !== prompt) {
    message = systemMessage(prompt);
    systemMessages.set(config, message);
  }
  return message;
}

/**
 * The request for the next model call, laid out for a prompt cache: the system prompt and the
 * history — the stable part, which the next request repeats until the history next shrinks
 * (`shrinkHistory`) — then everything that changes per step: what this step's context providers add
 * (a page state), the policies' hints and the next-step prompt. None of the last three is stored in
 * memory. `dropped` counts the history's messages the request leaves out.
 */
export function buildRequest(
  config: AgentConfig,
  state: AgentState,
  hints: readonly string[] = [],
): { request: LlmRequest; dropped: number } {
  const history = sentHistory(state);
  const additions = contextAdditions(config, state);
  const prompt = joinParts([...hints, additions.nextStepPrompt, state.reprompted ? requiredToolNudge : '']);
  const head: Message[] = config.systemPrompt ? [systemMessageOf(config, config.systemPrompt)] : [];
  // concat copies the (long) history in one go; spreading it element by element costs more per step.
  const messages = head.concat(history, additions.messages, prompt ? [userMessage(prompt)] : []);
  const stableMessages = head.length + history.length;
  const request: LlmRequest = {
    messages,
    tools: state.tools ?? config.tools,
    toolChoice: config.toolChoice,
    ...(config.llmProfile ? { profile: config.llmProfile } : {}),
    cache: state.runId ? { key: state.runId, stableMessages } : { stableMessages },
  };
  const from = sentFrom(state);
  return { request, dropped: from - (state.taskIndex < from ? 1 : 0) };
}
