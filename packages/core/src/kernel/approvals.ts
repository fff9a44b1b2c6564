import type { Agent } from './agent.js';
import type { ToolCall } from './messages.js';
import { defaultPolicies, type Policy } from './policies.js';
import { createStep } from './reducer.js';

/**
 * Which calls wait for a person's approval, decided where the agent is used rather than on the
 * tool: tool names; per tool, `true` or a predicate on the call's parsed arguments; or a function
 * of the call. A predicate that throws asks for approval (a broken rule must not wave calls through).
 */
export type ApprovalRule =
  | readonly string[]
  | Readonly<Record<string, boolean | ((args: never) => boolean)>>
  | ((call: ToolCall, args: unknown) => boolean);

function needsApproval(rule: ApprovalRule, call: ToolCall, args: unknown): boolean {
  try {
    if (typeof rule === 'function') return rule(call, args);
    if (Array.isArray(rule)) return rule.includes(call.name);
    const entry = (rule as Readonly<Record<string, boolean | ((args: unknown) => boolean)>>)[call.name];
    return typeof entry === 'function' ? entry(args) : entry === true;
  } catch {
    return true;
  }
}

/** A policy that sends the calls `rule` names through approval (`awaiting_approval` until answered). */
export function requireApproval(rule: ApprovalRule): Policy {
  return { name: 'requireApproval', needsApproval: (_context, call, args) => needsApproval(rule, call, args) };
}

/**
 * The agent with `rule` added to its policies: its runs ask before the calls it names. An agent
 * with a step of its own (not made from policies) cannot be changed this way.
 */
export function withApprovals(agent: Agent, rule: ApprovalRule): Agent {
  if (agent.step && !agent.policies) {
    throw new TypeError(
      `agent "${agent.config.name}" has a step of its own: add requireApproval(rule) to the policies it is made from`,
    );
  }
  const policies = [...(agent.policies ?? defaultPolicies()), requireApproval(rule)];
  return { ...agent, policies, step: createStep(policies) };
}
