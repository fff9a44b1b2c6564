import type { Agent, AgentState } from '@openmanus/core';
import { type AnyEffect, step } from '@openmanus/core/kernel';
import type { JournalEntry } from './journal.js';
import { type Change, jsonDiff, requestOf, walkStates } from './states.js';

/** How a fork or a replay changes the agent: its system prompt, a subset of its tools. */
export interface AgentChanges {
  readonly systemPrompt?: string;
  readonly tools?: readonly string[];
}

/** The agent with `changes` made (the same agent when there are none). */
export function variantOf(agent: Agent, changes: AgentChanges): Agent {
  const { systemPrompt, tools } = changes;
  if (systemPrompt === undefined && tools === undefined) return agent;
  const keep = tools && new Set(tools);
  return {
    ...agent,
    config: {
      ...agent.config,
      ...(systemPrompt !== undefined ? { systemPrompt } : {}),
      ...(keep ? { tools: agent.config.tools.filter((spec) => keep.has(spec.name)) } : {}),
    },
    ...(keep ? { tools: agent.tools.filter((tool) => keep.has(tool.spec.name)) } : {}),
  };
}

export interface Divergence {
  readonly transition: number;
  readonly event: string;
  readonly reason: string;
  /** The first differences, recorded run → re-run. */
  readonly changes?: readonly Change[];
}

export interface ReplayReport {
  readonly transitions: number;
  /** Transitions re-run to the same state and effects as recorded. */
  readonly matched: number;
  readonly diverged: Divergence | null;
}

const SHOWN_CHANGES = 20;

/**
 * Re-runs a recorded run through `agent`'s step, offline and exactly: each recorded event (the
 * model's replies, the tools' results, the people's answers) is fed to the reducer from the
 * state before it; the first transition whose state, or whose effects, differ from what was
 * recorded is where the agent diverges. Nothing is executed: no model is called, no tool runs.
 */
export function replayRun(agent: Agent, entries: readonly JournalEntry[], start: AgentState): ReplayReport {
  const stepOf = agent.step ?? step;
  const recorded = new Map<string, Extract<JournalEntry, { kind: 'effect' }>>();
  for (const entry of entries) if (entry.kind === 'effect') recorded.set(entry.effectId, entry);
  const total = entries.filter((entry) => entry.kind === 'event').length;
  let before = start;
  let matched = 0;
  let diverged: Divergence | null = null;
  walkStates(entries, (n, after, event) => {
    const [next, effects] = stepOf(agent.config, before, event);
    const differ = (reason: string, changes?: readonly Change[]) => {
      diverged = {
        transition: n,
        event: event.type,
        reason,
        ...(changes ? { changes: changes.slice(0, SHOWN_CHANGES) } : {}),
      };
      return false;
    };
    const stateChanges = jsonDiff(after, next).changes;
    if (stateChanges.length > 0) return differ('the state after it differs', stateChanges);
    for (const effect of effects as readonly AnyEffect[]) {
      const id = 'id' in effect && typeof effect.id === 'string' ? effect.id : undefined;
      if (!id) continue;
      const was = recorded.get(id);
      // The last transition's effects may not have started when the recording ended (a cancel).
      if (!was) {
        if (n < total) return differ(`it asks for ${effect.type} ${id}, which the recorded run never did`);
        continue;
      }
      if (was.effectType !== effect.type)
        return differ(`it asks for ${effect.type} ${id} where the recorded run did ${was.effectType}`);
      if (effect.type === 'callLlm') {
        const sent = requestOf(entries, id);
        const asked = {
          messages: effect.request.messages,
          tools: effect.request.tools,
          toolChoice: effect.request.toolChoice,
        };
        const changes = jsonDiff(sent, JSON.parse(JSON.stringify(asked))).changes;
        if (changes.length > 0) return differ(`model call ${id} is sent something else`, changes);
      } else {
        const changes = jsonDiff(was.effect, JSON.parse(JSON.stringify(effect))).changes;
        if (changes.length > 0) return differ(`${effect.type} ${id} differs`, changes);
      }
    }
    matched = n;
    before = after;
    return true;
  });
  return { transitions: total, matched, diverged };
}
