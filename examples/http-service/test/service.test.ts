// `pnpm serve`'s program (dist/main.js, built) in a child process, used over HTTP as the README's
// curl commands do: offline with the recorded demo, and with a model configured (the scripted
// OpenAI-compatible server behind OPENAI_BASE_URL). The server's own rules (who may call it,
// restarts, damaged runs) are tested in packages/server/test.
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { type OpenAiServer, type RecordedRequest, type ScriptEntry, startOpenAiServer } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { DEMO_TASK } from '../src/demoModel.js';
import { serve } from './child.js';
import { finish, onCleanup, TOKEN, tempDir, until } from './helpers.js';

/** The program in a fresh directory, its model the scripted server (priced by `model`'s name). */
async function live(
  script: Parameters<typeof startOpenAiServer>[0]['script'],
  { model = 'm', more = {} as Record<string, string> } = {},
) {
  const scripted: OpenAiServer = await startOpenAiServer({ script });
  onCleanup(() => scripted.close());
  const cwd = await tempDir();
  const env = {
    OPENAI_API_KEY: 'k',
    OPENAI_BASE_URL: scripted.baseURL,
    OPENMANUS_MODEL: model,
    OPENMANUS_SERVICE_TOKEN: TOKEN,
    ...more,
  };
  const served = await serve(cwd, env);
  return { ...served, model: scripted, cwd, workspace: join(cwd, 'workspace', 'service'), env };
}

describe('`pnpm serve` offline: the recorded demo', () => {
  it('prints the studio address with a new token kept 0600, and runs the demo: a plan, an approval, the answer, a next turn', async () => {
    const cwd = await tempDir();
    const { stdout, url, port, token, call, events, decide, base } = await serve(cwd);
    const tokenFile = join(cwd, 'workspace', 'service-data', 'token');
    expect(stdout).toContain('offline: a local scripted model replays a recorded run');
    expect(stdout).toContain('new service token, saved in workspace/service-data/token (mode 600)');
    expect(stdout).toContain('resumed 0 unfinished runs');
    expect(url).toBe(`http://127.0.0.1:${port}/studio/#token=${token}`);
    expect((await readFile(tokenFile, 'utf8')).trim()).toBe(token);
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    // The studio's page is served (it needs no token: it holds none).
    const studio = await fetch(`${base}/studio/`);
    expect(studio.status).toBe(200);
    expect(await studio.text()).toContain('OpenManus studio');

    // One agent, Manus, with the planning tool next to its own.
    const { agents } = (await call('GET', '/agents')).json as { agents: { name: string; tools: string[] }[] };
    expect(agents).toEqual([
      expect.objectContaining({ name: 'manus', tools: expect.arrayContaining(['planning', 'python_execute']) }),
    ]);

    const id = String((await call('POST', '/runs', { task: DEMO_TASK })).json.id);
    const first = await events(id);
    expect(
      first
        .filter((i) => i.type === 'plan')
        .at(-1)
        ?.plan?.steps.map((s) => s.text),
    ).toEqual(['List the primes below 50 with Python', 'Add them up', 'Report the result']);
    const paused = first.at(-1);
    expect(paused).toMatchObject({
      type: 'paused',
      run: { status: 'awaiting_approval', pending: [{ kind: 'approval', tool: 'python_execute' }] },
    });
    expect(String(paused?.run?.pending?.[0]?.args)).toContain('primes = [n for n in range(2, 50)');
    const callId = String(paused?.run?.pending?.[0]?.callId);

    expect((await decide(id, callId)).status).toBe(202);
    const ended = (await events(id)).at(-1);
    expect(ended).toMatchObject({ type: 'ended', run: { status: 'finished', finishReason: 'terminated' } });
    expect(String(ended?.run?.answer)).toContain('their sum is 328');
    const timeline = ended?.run?.timeline as { kind: string; tool?: string; result?: string }[];
    expect(timeline.find((e) => e.tool === 'python_execute')?.result).toContain('sum: 328');
    const plan = ended?.run?.plan as { steps: { status: string }[] };
    expect(plan.steps.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);

    // A next turn in the same conversation: the demo model says it only replays the recording.
    expect((await call('POST', `/runs/${id}/messages`, { text: 'And below 100?' })).status).toBe(202);
    expect(String((await events(id)).at(-1)?.run?.answer)).toContain('cannot answer "And below 100?"');
  });
});

describe('`pnpm serve` with a model configured', () => {
  it('says which model it runs, and gives a run’s usage with the cached tokens and the cost, live and at the end', async () => {
    const { stdout, call, events } = await live(
      [{ content: 'Four.', usage: { inputTokens: 2_000, outputTokens: 10, cachedInputTokens: 1_500 } }],
      { model: 'gpt-4o-mini' },
    );
    expect(stdout).toContain('live: model gpt-4o-mini');
    expect(stdout).toContain('service token: from OPENMANUS_SERVICE_TOKEN');
    const id = String((await call('POST', '/runs', { task: 'What is 2 + 2?' })).json.id);
    const items = await events(id);
    // 500 × $0.15 + 1,500 × $0.075 + 10 × $0.60 per million.
    const usage = { inputTokens: 2_000, outputTokens: 10, llmCalls: 1, cachedInputTokens: 1_500, costUsd: 0.0001935 };
    expect(items.at(-1)).toMatchObject({ type: 'ended', run: { usage, answer: 'Four.' } });
    expect(items.filter((i) => i.type === 'event').at(-1)).toMatchObject({ usage });
    expect((await call('GET', `/runs/${id}`)).json).toMatchObject({ usage, finishReason: 'answered' });
  });

  it('says a cost is unknown, as null, when the model has no price; a late client still gets a fast run’s events', async () => {
    const { call, events } = await live([{ content: 'Four.', usage: { inputTokens: 20, outputTokens: 1 } }]);
    const id = String((await call('POST', '/runs', { task: 'What is 2 + 2?' })).json.id);
    await until(async () => (await call('GET', `/runs/${id}`)).json.status === 'finished');
    const items = await events(id);
    expect(items.filter((i) => i.type === 'event').length).toBeGreaterThan(1);
    // Before the first call, nothing was spent.
    expect(items.find((i) => i.type === 'event')).toMatchObject({ usage: { llmCalls: 0, costUsd: 0 } });
    const usage = { inputTokens: 20, outputTokens: 1, llmCalls: 1, costUsd: null };
    expect(items.at(-1)).toMatchObject({ type: 'ended', run: { usage, answer: 'Four.' } });
  });

  it('a rejected Python call never runs, and the reason reaches the model', async () => {
    const { call, events, decide, model, workspace } = await live([
      {
        toolCalls: [
          { id: 'py1', name: 'python_execute', arguments: { code: 'open("gone.txt","w").write("rm -rf /")' } },
        ],
      },
      finish('Understood, I will not do that.'),
    ]);
    const id = String((await call('POST', '/runs', { task: 'clean up' })).json.id);
    expect((await events(id)).at(-1)).toMatchObject({ type: 'paused', run: { pending: [{ callId: 'py1' }] } });
    expect((await call('POST', `/runs/${id}/approve`, { effectId: 'nope' })).status).toBe(409);
    expect((await decide(id, 'py1', false, 'never')).status).toBe(202);
    expect((await events(id)).at(-1)).toMatchObject({ run: { answer: 'Understood, I will not do that.' } });
    expect(model.requests[1]?.messages.at(-2)?.content).toBe('Error: the user did not approve this call: never');
    expect(existsSync(join(workspace, 'gone.txt'))).toBe(false);
  });

  it('runs many tasks at once and cancels one on request', async () => {
    const script: ScriptEntry<RecordedRequest> = (request) => {
      const task = String(request.messages.find((m) => m.role === 'user')?.content);
      return task === 'slow' ? { content: 'late', delayMs: 30_000 } : { content: `answer to ${task}` };
    };
    const { call, events } = await live([script, script, script, script, script, script]);
    const slow = String((await call('POST', '/runs', { task: 'slow' })).json.id);
    const ids = await Promise.all(
      [1, 2, 3, 4, 5].map(async (n) => String((await call('POST', '/runs', { task: `task ${n}` })).json.id)),
    );
    const ends = await Promise.all(ids.map(async (id) => (await events(id)).at(-1)?.run?.answer));
    expect(ends).toEqual([1, 2, 3, 4, 5].map((n) => `answer to task ${n}`));
    const cancelled = await call('POST', `/runs/${slow}/cancel`, {});
    expect(cancelled.json).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'cancelled by the client' },
    });
  });

  it('multi-turn: a message answers ask_human, and starts the next task once the run has ended', async () => {
    const { call, events, model } = await live([
      { toolCalls: [{ id: 'q1', name: 'ask_human', arguments: { inquire: 'Which city?' } }] },
      finish('Kyoto it is.'),
      finish('Osaka is next door.'),
    ]);
    const id = String((await call('POST', '/runs', { task: 'plan a trip' })).json.id);
    expect((await events(id)).at(-1)).toMatchObject({
      type: 'paused',
      run: { status: 'awaiting_human', pending: [{ kind: 'human', question: 'Which city?' }] },
    });
    expect((await call('POST', `/runs/${id}/messages`, { text: 'Kyoto' })).status).toBe(202);
    expect((await events(id)).at(-1)).toMatchObject({ type: 'ended', run: { answer: 'Kyoto it is.' } });
    expect(model.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toContain('Kyoto');
    expect((await call('POST', `/runs/${id}/messages`, { text: 'and Osaka?' })).status).toBe(202);
    const last = (await events(id)).at(-1);
    expect(last).toMatchObject({ type: 'ended', run: { answer: 'Osaka is next door.' } });
    const timeline = (last?.run?.timeline ?? []) as { kind: string; text?: string }[];
    expect(timeline.filter((e) => e.kind === 'user').map((e) => e.text)).toEqual(['plan a trip', 'and Osaka?']);
    expect((await call('POST', `/runs/${id}/messages`, { text: '' })).status).toBe(400);
  });

  it('a stream resumed with Last-Event-ID gets the rest of the leg; a new one starts with a snapshot', async () => {
    const { base, auth, call } = await live([
      {
        content: 'Looking.',
        toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: '/tmp' } }],
      },
      { ...finish('Seen.'), delayMs: 1500 },
    ]);
    const id = String((await call('POST', '/runs', { task: 'look' })).json.id);
    type Data = { type: string; event?: { type: string } };
    /** Reads the stream's events, stopping after `enough` says so (or at its end). */
    const read = async (headers: Record<string, string>, enough: (data: Data) => boolean) => {
      const res = await fetch(`${base}/runs/${id}/events`, { headers: { ...auth, ...headers } });
      const got: { id?: string; data: Data }[] = [];
      let buffer = '';
      const decoder = new TextDecoder();
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop() ?? '';
        for (const block of blocks) {
          const field = (name: string) =>
            block
              .split('\n')
              .find((l) => l.startsWith(`${name}: `))
              ?.slice(name.length + 2);
          got.push({ id: field('id'), data: JSON.parse(field('data') ?? '{}') });
        }
        // Leaving the loop cancels the body: the client hangs up.
        if (got.some((m) => enough(m.data))) break;
      }
      return got;
    };
    const first = await read({}, (data) => data.event?.type === 'toolCompleted');
    const lastId = first.at(-1)?.id ?? '';
    expect(lastId).toMatch(/^\w+\.\d+$/);
    // A fresh subscriber in the middle of the leg: where the run is now, then what follows.
    const fresh = await read({}, () => true);
    expect(fresh[0]?.data).toMatchObject({ type: 'snapshot', run: { status: 'awaiting_llm' } });
    // Resumed: exactly the events after the last one seen, to the end of the leg.
    const rest = await read({ 'last-event-id': lastId }, () => false);
    const [leg, index] = lastId.split('.');
    expect(rest[0]?.id).toBe(`${leg}.${Number(index) + 1}`);
    expect(rest.map((m) => m.data.type)).not.toContain('snapshot');
    expect(rest.at(-1)?.data).toMatchObject({ type: 'ended', run: { answer: 'Seen.' } });
  });

  it('answers bad requests clearly', async () => {
    const { call } = await live([]);
    expect(await call('POST', '/runs', { nope: 1 })).toEqual({
      status: 400,
      json: { error: 'body must be {"task": "...", "agent"?: "..."}' },
    });
    expect((await call('POST', '/runs', { task: 'x', agent: 'other' })).status).toBe(400);
    expect((await call('GET', '/runs/unknown')).status).toBe(404);
    expect((await call('GET', '/elsewhere')).status).toBe(404);
  });
});

describe('its settings from the environment', () => {
  it('OPENMANUS_SERVICE_TOKEN, _HOSTS, _ORIGINS, _DATA and _WORKSPACE', async () => {
    const dir = await tempDir();
    const token = 'a-token-of-my-own-0123456789';
    const { stdout, cwd, port, call, events, decide, model } = await live(
      [
        { toolCalls: [{ id: 'py1', name: 'python_execute', arguments: { code: 'import os; print(os.getcwd())' } }] },
        finish('Done.'),
      ],
      {
        more: {
          OPENMANUS_SERVICE_TOKEN: token,
          OPENMANUS_SERVICE_HOSTS: 'agents.internal, other.internal:9000',
          OPENMANUS_SERVICE_ORIGINS: 'https://ui.example',
          OPENMANUS_SERVICE_DATA: join(dir, 'data'),
          OPENMANUS_SERVICE_WORKSPACE: join(dir, 'work'),
        },
      },
    );
    expect(stdout).toContain('service token: from OPENMANUS_SERVICE_TOKEN');
    expect(stdout).toContain(`#token=${token}`);
    expect(existsSync(join(dir, 'data', 'runs.db'))).toBe(true);
    expect(existsSync(join(dir, 'data', 'token'))).toBe(false);
    expect(existsSync(join(cwd, 'workspace'))).toBe(false);
    /** GET /runs with the token and these headers (Host included, which fetch would not send). */
    const list = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const headed = { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}`, ...headers };
        request({ host: '127.0.0.1', port, path: '/runs', headers: headed, setHost: false, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
    expect(await list({})).toBe(200);
    expect(await list({ host: 'agents.internal:1234' })).toBe(200);
    expect(await list({ host: 'other.internal:9000' })).toBe(200);
    expect(await list({ host: 'other.internal:9001' })).toBe(421);
    expect(await list({ host: 'elsewhere.internal' })).toBe(421);
    expect(await list({ origin: 'https://ui.example' })).toBe(200);
    expect(await list({ origin: 'https://elsewhere.example' })).toBe(403);
    expect(await list({ authorization: `Bearer ${TOKEN}` })).toBe(401);
    // The agent works in the workspace given: the model's Python runs there.
    const id = String((await call('POST', '/runs', { task: 'where are you?' })).json.id);
    await events(id);
    expect((await decide(id, 'py1')).status).toBe(202);
    expect((await events(id)).at(-1)).toMatchObject({ run: { answer: 'Done.' } });
    expect(model.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toBe(join(dir, 'work'));
  });

  it('refuses to start with a token under 16 characters', async () => {
    await expect(serve(await tempDir(), { OPENMANUS_SERVICE_TOKEN: 'short' })).rejects.toThrow(
      /exited \(2\): the server's token must be at least 16 characters/,
    );
  });
});

describe('a restart of `pnpm serve` on the same directory', () => {
  it('resumes a run killed while the model thought; a paused run waits on', async () => {
    let thoughts = 0;
    const {
      call,
      events,
      model,
      process: first,
      exited,
      env,
      cwd,
    } = await live((request) => {
      if (request.messages.find((m) => m.role === 'user')?.content === 'think')
        // The first process dies while waiting for this reply.
        return ++thoughts === 1 ? { content: 'never delivered', delayMs: 30_000 } : finish('Thought it over.');
      return request.messages.some((m) => m.role === 'tool')
        ? finish('42.')
        : { toolCalls: [{ id: 'py1', name: 'python_execute', arguments: { code: 'print(6 * 7)' } }] };
    });
    const paused = String((await call('POST', '/runs', { task: 'compute' })).json.id);
    expect((await events(paused)).at(-1)).toMatchObject({ type: 'paused' });
    const thinking = String((await call('POST', '/runs', { task: 'think' })).json.id);
    await until(() => thoughts === 1);
    first.kill('SIGKILL');
    await exited;

    const again = await serve(cwd, env);
    expect(again.stdout).toContain('resumed 1 unfinished runs');
    await until(async () => (await again.call('GET', `/runs/${thinking}`)).json.status === 'finished');
    expect((await again.call('GET', `/runs/${thinking}`)).json).toMatchObject({ answer: 'Thought it over.' });
    expect((await again.call('GET', `/runs/${paused}`)).json).toMatchObject({ status: 'awaiting_approval' });
    expect((await again.decide(paused, 'py1')).status).toBe(202);
    expect((await again.events(paused)).at(-1)).toMatchObject({ type: 'ended', run: { answer: '42.' } });
    expect(model.requests.at(-1)?.messages.at(-2)?.content).toBe('42');
  });
});
