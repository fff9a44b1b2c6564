// The agent the durable bench runs, in process and on workers: each step one call of a no-op tool
// with an instant model, until the step count its task names ("steps 50"); then an answer.
import { createAgent, defaultPolicies, defineTool } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { z } from 'zod';

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing',
  parameters: z.object({ left: z.number() }),
  execute: () => 'ok',
});

export const stepsAgent = createAgent({
  name: 'steps',
  tools: [noop],
  policies: defaultPolicies({ maxSteps: 10_000 }),
});

/**
 * The model: a tool call per step until the task's count, `delayMs` per reply (0: instant). The
 * steps left ride in the call's arguments: the history sent may be trimmed of the task.
 */
export const stepsLlm = (delayMs = 0) =>
  scriptedLlm((request) => {
    const last = request.messages.findLast((m) => m.role === 'assistant')?.toolCalls?.[0];
    const task = request.messages.find((m) => m.role === 'user');
    const left = last
      ? JSON.parse(last.arguments).left - 1
      : Number(/steps (\d+)/.exec(String(task?.content))?.[1]) - 1;
    const reply = left > 0 ? { toolCalls: [{ name: 'noop', arguments: { left } }] } : { content: 'done' };
    return delayMs ? { ...reply, delayMs } : reply;
  });
