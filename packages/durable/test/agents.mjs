// The test workers' agents (test/worker.mjs serves them; a test may run one in process to compare).
// Their tools append each execution to `toolLog` as "runId effectId what workerId", so a test
// counts every execution and sees which worker ran it.
import { appendFile } from 'node:fs/promises';
import { agentTool, askHuman, createAgent, defineTool } from '@openmanus/core';
import { z } from 'zod';

export function testAgents({ toolLog, llm, workerId = 'in-process', continueEvery }) {
  const log = (scope, what) => appendFile(toolLog, `${scope.runId} ${scope.effectId} ${what} ${workerId}\n`);
  const untilStopped = (scope) => new Promise((resolve) => scope.signal.addEventListener('abort', resolve));

  const record = defineTool({
    name: 'record',
    description: 'Records a note',
    parameters: z.object({ note: z.string() }),
    parallelSafe: true,
    execute: async ({ note }, scope) => {
      await log(scope, note.replaceAll(' ', '-'));
      return `recorded ${note}`;
    },
  });

  // At most once: logs its start, then works until the run stops (the test kills its worker meanwhile).
  const launch = defineTool({
    name: 'launch',
    description: 'Launches something that must not be launched twice',
    parameters: z.object({ what: z.string() }),
    atMostOnce: true,
    execute: async ({ what }, scope) => {
      await log(scope, what.replaceAll(' ', '-'));
      await untilStopped(scope);
      return `launched ${what}`;
    },
  });

  // Works until the run stops, then logs that it was stopped.
  const hold = defineTool({
    name: 'hold',
    description: 'Holds on until stopped',
    parameters: z.object({}),
    execute: async (_args, scope) => {
      await log(scope, 'holding');
      await untilStopped(scope);
      await log(scope, 'stopped');
      return 'stopped';
    },
  });

  // Asks a person how many (MCP elicitation, as a remote server would) and the run's model for a note (sampling).
  const book = defineTool({
    name: 'book',
    description: 'Books a table',
    parameters: z.object({}),
    execute: async (_args, scope) => {
      const form = await scope.elicit({
        message: 'How many?',
        schema: { type: 'object', properties: { people: { type: 'integer' } }, required: ['people'] },
      });
      const note = await scope
        .sample({
          messages: [{ role: 'user', content: { type: 'text', text: 'A note for the booking.' } }],
          maxTokens: 20,
        })
        .then(
          (answer) => answer.content.text,
          (error) => `none (${error.message})`,
        );
      return `form: ${form.action}${form.action === 'accept' ? ` ${form.content.people}` : ''}; note: ${note}`;
    },
  });

  // Every call waits for a person's approval: a child agent with it pauses its parent's call.
  const file = defineTool({
    name: 'file',
    description: 'Files a note',
    parameters: z.object({ note: z.string() }),
    needsApproval: true,
    execute: async ({ note }, scope) => {
      await log(scope, note.replaceAll(' ', '-'));
      return `filed ${note}`;
    },
  });
  const clerk = createAgent({ name: 'clerk', tools: [file] });

  // Pauses on a form for a person (as an MCP server's question does with nobody at hand), and
  // returns the answer once the run goes on with it. At most once, so its start is recorded too.
  const reserve = defineTool({
    name: 'reserve',
    description: 'Reserves a table',
    parameters: z.object({}),
    atMostOnce: true,
    execute: async (_args, scope) => {
      if (scope.answer?.type === 'humanReplied') {
        await log(scope, 'answered');
        return `reserved for ${scope.answer.answer}`;
      }
      await log(scope, 'asking');
      const form = {
        message: 'How many?',
        schema: { type: 'object', properties: { people: { type: 'integer' } }, required: ['people'] },
      };
      const call = { id: scope.callId, name: 'reserve', arguments: '{}' };
      const question = 'How many people?';
      return {
        suspend: { progress: { asked: 1 }, waiting: [{ kind: 'human', effectId: 'elicit-1', question, call, form }] },
      };
    },
  });

  const parts = continueEvery === undefined ? {} : { continueEvery };
  return {
    recorder: { agent: createAgent({ name: 'recorder', tools: [record] }), llm, ...parts },
    asker: { agent: createAgent({ name: 'asker', tools: [askHuman] }), llm, ...parts },
    launcher: { agent: createAgent({ name: 'launcher', tools: [launch] }), llm, ...parts },
    holder: { agent: createAgent({ name: 'holder', tools: [record, hold] }), llm, ...parts },
    // No one answers a worker's tools: the form is cancelled, the note refused.
    booker: { agent: createAgent({ name: 'booker', tools: [book] }), llm, ...parts },
    // The host's own answers, given with the agent.
    answeredBooker: {
      agent: createAgent({ name: 'booker', tools: [book] }),
      llm,
      onElicitation: () => ({ action: 'accept', content: { people: 2 } }),
      onSampling: () => true,
      ...parts,
    },
    // Hands its task to `clerk`, whose `file` calls wait for approval.
    delegator: { agent: createAgent({ name: 'delegator', tools: [agentTool(clerk)] }), llm, ...parts },
    reserver: { agent: createAgent({ name: 'reserver', tools: [reserve] }), llm, ...parts },
    // Every `record` call waits for a person's approval.
    guarded: { agent: createAgent({ name: 'guarded', tools: [record] }), llm, approvals: { record: true }, ...parts },
  };
}
