import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import { type ApprovalRule, requireApproval, withApprovals } from '../src/kernel/approvals.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { createStep } from '../src/kernel/reducer.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { createFileStore } from '../src/shell/fileStore.js';
import { resumeWith, run } from '../src/shell/run.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { type OpenAiServer, startOpenAiServer } from '../src/testing/server.js';
import { askHuman } from '../src/tools/askHuman.js';
import { defineTool } from '../src/tools/defineTool.js';
import { terminate } from '../src/tools/terminate.js';
import { call, drive, ofType, testConfig } from './helpers.js';

const gated = (rule: ApprovalRule, ...calls: ReturnType<typeof call>[]) => {
  const config = testConfig();
  const step = createStep([...defaultPolicies(), requireApproval(rule)]);
  const [state, effects] = step(config, drive(config, 'Go', []).state, {
    type: 'llmResponded',
    effectId: 'llm-1',
    content: '',
    toolCalls: calls,
  });
  return { phases: state.turn?.calls.map((c) => c.phase), effects, state };
};

describe('approval rules given where the agent is used', () => {
  const write = (path: string) => call('write', { path }, `w-${path}`);
  const echo = call('echo', { text: 'hi' }, 'e1');

  it('by tool name: the named calls wait for approval, the others run', () => {
    const { phases, effects, state } = gated(['write'], write('/tmp/a'), echo);
    expect(phases).toEqual(['approval', 'running']);
    expect(state.status).toBe('awaiting_approval');
    expect(ofType(effects, 'requestApproval').map((e) => e.call.name)).toEqual(['write']);
    expect(ofType(effects, 'callTool').map((e) => e.call.name)).toEqual(['echo']);
  });

  it('per tool, by a predicate on the parsed arguments', () => {
    const rule = { write: (args: { path: string }) => !args.path.startsWith('/tmp/') };
    expect(gated(rule, write('/tmp/a'), write('/etc/passwd')).phases).toEqual(['running', 'approval']);
    expect(gated({ write: true, echo: false }, write('/tmp/a'), echo).phases).toEqual(['approval', 'running']);
  });

  it('by a function of the call; a rule that throws asks rather than lets the call through', () => {
    expect(gated((c) => c.name === 'echo', write('/x'), echo).phases).toEqual(['running', 'approval']);
    const broken = {
      write: () => {
        throw new Error('bug in the rule');
      },
    };
    expect(gated(broken, write('/tmp/a')).phases).toEqual(['approval']);
  });

  it('a refused call is not gated: invalid arguments are answered at once', () => {
    const { effects, state } = gated(['write'], { id: 'b1', name: 'write', arguments: '{not json' });
    expect(ofType(effects, 'requestApproval')).toEqual([]);
    expect(state.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'b1' });
    expect(String(state.messages.at(-1)?.content)).toContain('not valid JSON');
  });

  it('a call refused while it waits for approval is answered with the error; a refusal of nothing changes nothing', () => {
    const { effects, state } = gated(['write'], write('/tmp/a'));
    const [approval] = ofType(effects, 'requestApproval');
    const step = createStep([...defaultPolicies(), requireApproval(['write'])]);
    const config = testConfig();
    expect(step(config, state, { type: 'callRefused', effectId: 'approval-9-0', error: 'Error: x' })[0]).toBe(state);
    const [after] = step(config, state, { type: 'callRefused', effectId: approval?.id ?? '', error: 'Error: bad' });
    expect(after.status).toBe('awaiting_llm');
    expect(after.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'w-/tmp/a', content: 'Error: bad' });
  });

  it('cannot be added to an agent whose step is its own', () => {
    const custom = createAgent({ name: 'own', step: (config, state, event) => createStep()(config, state, event) });
    expect(() => withApprovals(custom, ['x'])).toThrow(/step of its own/);
    const made = createAgent({ name: 'made', policies: defaultPolicies() });
    expect(withApprovals(made, ['x']).policies?.map((p) => p.name)).toContain('requireApproval');
  });
});

describe('a run that waits for approval, answered later from its saved state', () => {
  let server: OpenAiServer | undefined;
  let dir = '';
  afterEach(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('pauses with the pending call, never runs a rejected one, and runs an approved one after a resume elsewhere', async () => {
    dir = await mkdtemp(join(tmpdir(), 'approvals-'));
    const ran: string[] = [];
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploys a service.',
      parameters: z.object({ service: z.string(), env: z.string() }),
      execute: ({ service, env }) => {
        ran.push(`${service}@${env}`);
        return `deployed ${service} to ${env}`;
      },
    });
    const agent = createAgent({ name: 'ops', tools: [deploy, terminate] });
    const approvals = { deploy: (args: { env: string }) => args.env === 'prod' };
    const deployTo = (env: string) => ({ toolCalls: [{ name: 'deploy', arguments: { service: 'api', env } }] });
    server = await startOpenAiServer({
      script: [
        deployTo('staging'),
        deployTo('prod'),
        {
          content: 'Not allowed in prod, as you said.',
          toolCalls: [{ name: 'deploy', arguments: { service: 'api', env: 'prod' } }],
        },
        { content: 'Deployed to staging and prod.' },
      ],
    });
    const llm = createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
    const store = createFileStore(join(dir, 'runs'));

    const paused = await run(agent, 'Deploy the api', { llm, store, runId: 'r1', approvals });
    expect(ran).toEqual(['api@staging']);
    expect(paused.status).toBe('awaiting_approval');
    expect(paused.pending).toEqual([
      expect.objectContaining({ kind: 'approval', args: { service: 'api', env: 'prod' }, effectId: 'approval-2-0' }),
    ]);

    // Days later, another process: only the run id and the store.
    const rejected = await resumeWith(
      agent,
      'r1',
      { type: 'approvalDenied', effectId: 'approval-2-0', reason: 'freeze until Monday' },
      { llm, store, approvals },
    );
    expect(ran).toEqual(['api@staging']);
    expect(JSON.stringify(server.requests[2]?.messages)).toContain(
      'the user did not approve this call: freeze until Monday',
    );
    expect(rejected.status).toBe('awaiting_approval');

    const approved = await resumeWith(
      agent,
      'r1',
      { type: 'approvalGiven', effectId: rejected.pending[0]?.effectId ?? '' },
      { llm, store, approvals },
    );
    expect(ran).toEqual(['api@staging', 'api@prod']);
    expect(approved).toMatchObject({ status: 'finished', answer: 'Deployed to staging and prod.' });
    const saved = await store.load('r1');
    expect(saved?.state.status).toBe('finished');
    expect(JSON.stringify(saved?.state.messages)).toContain('deployed api to prod');
  });
});

describe('arguments are checked before a person is asked', () => {
  const ran: string[] = [];
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys a service.',
    parameters: z.object({ service: z.string(), env: z.enum(['staging', 'prod']) }),
    needsApproval: true,
    execute: ({ service, env }) => {
      ran.push(`${service}@${env}`);
      return 'deployed';
    },
  });
  const agent = createAgent({ name: 'ops', tools: [deploy] });
  const bad = { toolCalls: [{ name: 'deploy', arguments: { service: 'api', env: 'moon' } }] };

  it('a call the schema refuses is answered with the usual error; nobody is asked and the run does not pause', async () => {
    const asked: string[] = [];
    const llm = scriptedLlm([bad, { content: 'I will fix the arguments.' }]);
    const outcome = await run(agent, 'deploy', {
      llm,
      onApproval: (toolCall) => {
        asked.push(toolCall.name);
        return true;
      },
    });
    expect(asked).toEqual([]);
    expect(ran).toEqual([]);
    expect(outcome).toMatchObject({ status: 'finished', pending: [] });
    const result = outcome.state.messages.find((m) => m.role === 'tool');
    expect(result?.content).toMatch(/^Error: invalid arguments for deploy:\n.*env/s);

    // Without a callback the run would have paused for a person: it goes on instead.
    const unattended = await run(agent, 'deploy', { llm: scriptedLlm([bad, { content: 'fixed' }]) });
    expect(unattended).toMatchObject({ status: 'finished', answer: 'fixed', pending: [] });
  });

  it('a question whose arguments ask_human refuses is not put to a person either', async () => {
    const asked: string[] = [];
    const outcome = await run(createAgent({ name: 'asker', tools: [askHuman] }), 'ask', {
      llm: scriptedLlm([{ toolCalls: [{ name: 'ask_human', arguments: { inquire: 42 } }] }, { content: 'ok' }]),
      onHuman: (question) => {
        asked.push(question);
        return 'yes';
      },
    });
    expect(asked).toEqual([]);
    expect(outcome).toMatchObject({ status: 'finished', pending: [] });
    expect(outcome.state.messages.find((m) => m.role === 'tool')?.content).toMatch(
      /^Error: invalid arguments for ask_human:\n.*inquire/s,
    );
  });

  it('whoever performs the asking: a host performer of its own is not called either', async () => {
    const asked: string[] = [];
    const outcome = await run(agent, 'deploy', {
      llm: scriptedLlm([bad, { toolCalls: [{ name: 'deploy', arguments: { service: 'api', env: 'prod' } }] }]),
      performers: {
        requestApproval: (effect) => {
          asked.push(JSON.stringify(effect.args));
          return undefined;
        },
      },
    });
    // Only the valid call reaches the host; the run pauses for it.
    expect(asked).toEqual(['{"service":"api","env":"prod"}']);
    expect(outcome.status).toBe('awaiting_approval');
    expect(outcome.pending.map((p) => p.call.arguments)).toEqual(['{"service":"api","env":"prod"}']);
  });
});
