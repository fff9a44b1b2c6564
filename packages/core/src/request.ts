import type { AgentConfig } from './agent.js';
import type { RequestAdditions } from './context.js';
import type { LlmRequest } from './effects.js';
import { selectWindow } from './memory.js';
import { type Message, systemMessage, userMessage } from './messages.js';
import type { AgentState } from './state.js';

export const requiredToolNudge =
  'Your last reply had no tool call, but this step requires one. Call one of the available tools now.';

/** Drops images from all but the newest `keep` messages that carry one (they are the costliest part). */
function keepNewestImages(messages: readonly Message[], keep: number): readonly Message[] {
  let seen = 0;
  let out: Message[] | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (!message || !('image' in message) || !message.image) continue;
    if (++seen <= keep) continue;
    out ??= [...messages];
    const { image: _dropped, ...rest } = message;
    out[i] = rest;
  }
  return out ?? messages;
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

/**
 * The request for the next model call: system prompt, the memory window, what this step's
 * context providers add, then the next-step prompt (with a one-off stuck hint) — the last two
 * are never stored in memory.
 */
export function buildRequest(config: AgentConfig, state: AgentState): { request: LlmRequest; dropped: number } {
  const window = selectWindow(state.messages, state.taskIndex, config.memory.maxMessages);
  const messages: Message[] = [];
  if (config.systemPrompt) messages.push(systemMessage(config.systemPrompt));
  messages.push(...keepNewestImages(window.messages, config.keepImages));
  const additions = contextAdditions(config, state);
  messages.push(...additions.messages);
  const prompt = [state.stuck.hint, additions.nextStepPrompt, state.reprompted ? requiredToolNudge : undefined]
    .filter((part): part is string => Boolean(part))
    .join('\n\n');
  if (prompt) messages.push(userMessage(prompt));
  const request: LlmRequest = {
    messages,
    tools: config.tools,
    toolChoice: config.toolChoice,
    ...(config.llmProfile ? { profile: config.llmProfile } : {}),
  };
  return { request, dropped: window.dropped };
}
