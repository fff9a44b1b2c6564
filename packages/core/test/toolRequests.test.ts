// What a running tool may tell or ask beyond its result: progress and log lines as run items, a
// person's structured answer through the host, a completion from the run's model once the host
// approves, and result parts and a structured result kept for MCP clients.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  type ElicitationRequest,
  type RunItem,
  run,
  type SamplingRequest,
  type SamplingResult,
  stream,
  type ToolScope,
} from '../src/index.js';
import { createToolRun } from '../src/internal/index.js';
import { scriptedLlm } from '../src/testing/index.js';

const callThen = (name: string, args: object = {}, answer = 'Done.') => [
  { toolCalls: [{ name, arguments: args }] },
  { content: answer },
];

/** A tool whose body is the test's; it returns what the body returns. */
const probe = (body: (scope: ToolScope) => Promise<string>) =>
  defineTool({
    name: 'probe',
    description: 'Does what the test says',
    parameters: z.object({}),
    execute: (_, scope) => body(scope),
  });

describe('a tool reports and asks through its scope', () => {
  it('reports progress and log lines as run items of its call', async () => {
    const tool = probe(async (scope) => {
      scope.reportProgress({ progress: 1, total: 2, message: 'halfway' });
      scope.log('info', { fetched: 3 }, 'fetcher');
      scope.reportProgress({ progress: 2, total: 2 });
      return 'fetched';
    });
    const items: RunItem[] = [];
    for await (const item of stream(createAgent({ name: 'a', tools: [tool] }), 'go', {
      llm: scriptedLlm(callThen('probe')),
    }))
      items.push(item);
    const call = items.find(
      (item): item is Extract<RunItem, { type: 'effect' }> => item.type === 'effect' && item.effect.type === 'callTool',
    );
    const effectId = call?.effect.id;
    expect(items.filter((item) => item.type === 'progress' || item.type === 'log')).toEqual([
      { type: 'progress', effectId, tool: 'probe', progress: 1, total: 2, message: 'halfway' },
      { type: 'log', effectId, tool: 'probe', level: 'info', logger: 'fetcher', data: { fetched: 3 } },
      { type: 'progress', effectId, tool: 'probe', progress: 2, total: 2 },
    ]);
  });

  it('asks a person through the host’s onElicitation, and hears "cancel" when there is none', async () => {
    const asked: ElicitationRequest[] = [];
    const tool = probe(async (scope) => {
      const answer = await scope.elicit({
        message: 'Which region?',
        schema: { type: 'object', properties: { region: { type: 'string' } }, required: ['region'] },
      });
      return answer.action === 'accept' ? `region ${String(answer.content.region)}` : answer.action;
    });
    const agent = createAgent({ name: 'a', tools: [tool] });
    const answered = await run(agent, 'go', {
      llm: scriptedLlm(callThen('probe')),
      onElicitation: (request) => {
        asked.push(request);
        return { action: 'accept', content: { region: 'eu-west' } };
      },
    });
    expect(asked.map((request) => request.message)).toEqual(['Which region?']);
    expect(answered.state.messages.find((m) => m.role === 'tool')?.content).toBe('region eu-west');

    const unasked = await run(agent, 'go', { llm: scriptedLlm(callThen('probe')) });
    expect(unasked.state.messages.find((m) => m.role === 'tool')?.content).toBe('cancel');
  });

  it('samples the run’s model once the host approves, counted in the run’s usage; refused otherwise', async () => {
    const seen: SamplingRequest[] = [];
    const tool = probe(async (scope) => {
      const reply = await scope.sample({
        systemPrompt: 'You name colours.',
        messages: [{ role: 'user', content: { type: 'text', text: 'Name a colour.' } }],
        maxTokens: 20,
      });
      return `${reply.model} said ${reply.content.text}`;
    });
    const agent = createAgent({ name: 'a', tools: [tool] });
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'probe', arguments: {} }] },
      { content: 'Teal.' },
      { content: 'Done.' },
    ]);
    const approved = await run(agent, 'go', {
      llm,
      onSampling: (request) => {
        seen.push(request);
        return true;
      },
    });
    expect(seen).toHaveLength(1);
    expect(approved.state.messages.find((m) => m.role === 'tool')?.content).toBe('scripted said Teal.');
    // The sampling request went to the model as it was: its system prompt and message, no tools.
    expect(llm.requests[1]).toMatchObject({
      messages: [
        { role: 'system', content: 'You name colours.' },
        { role: 'user', content: 'Name a colour.' },
      ],
      tools: [],
    });
    expect(approved.state.usage.llmCalls).toBe(3);

    const refused = await run(agent, 'go', {
      llm: scriptedLlm(callThen('probe')),
      onSampling: () => ({ approved: false, reason: 'not on this budget' }),
    });
    expect(refused.state.messages.find((m) => m.role === 'tool')?.content).toContain(
      'the host refused the sampling request: not on this budget',
    );
    const nobody = await run(agent, 'go', { llm: scriptedLlm(callThen('probe')) });
    expect(nobody.state.messages.find((m) => m.role === 'tool')?.content).toContain('needs the host to approve it');
  });

  it('asks a person to open a URL (URL mode) through the same onElicitation', async () => {
    const asked: ElicitationRequest[] = [];
    const tool = probe(async (scope) => {
      const answer = await scope.elicit({
        mode: 'url',
        message: 'Sign in to the calendar.',
        url: 'https://calendar.example/authorize',
        elicitationId: 'e-1',
      });
      return answer.action;
    });
    const done = await run(createAgent({ name: 'a', tools: [tool] }), 'go', {
      llm: scriptedLlm(callThen('probe')),
      onElicitation: (request) => {
        asked.push(request);
        return { action: 'accept', content: {} };
      },
    });
    expect(asked).toEqual([
      {
        mode: 'url',
        message: 'Sign in to the calendar.',
        url: 'https://calendar.example/authorize',
        elicitationId: 'e-1',
      },
    ]);
    expect(done.state.messages.find((m) => m.role === 'tool')?.content).toBe('accept');
  });

  it('offers the sampling request’s tools to the model, and hands back its calls without running them', async () => {
    const ran: unknown[] = [];
    // A tool of the run with the very name the sampling request offers: the model's call must not reach it.
    const lookup = defineTool({
      name: 'lookup',
      description: 'The run’s own lookup',
      parameters: z.object({ city: z.string() }),
      execute: (args) => {
        ran.push(args);
        return 'looked up';
      },
    });
    let result: SamplingResult | undefined;
    const tool = probe(async (scope) => {
      result = await scope.sample({
        messages: [{ role: 'user', content: { type: 'text', text: 'Weather in Oslo?' } }],
        maxTokens: 100,
        tools: [
          {
            name: 'lookup',
            description: 'Looks up the weather',
            inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
        toolChoice: 'required',
      });
      return `${result.stopReason} ${result.toolUse?.map((use) => use.name).join(',')}`;
    });
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'probe', arguments: {} }] },
      { toolCalls: [{ id: 'use-1', name: 'lookup', arguments: { city: 'Oslo' } }] },
      { content: 'Done.' },
    ]);
    const done = await run(createAgent({ name: 'a', tools: [tool, lookup] }), 'go', { llm, onSampling: () => true });
    expect(done.state.messages.find((m) => m.role === 'tool')?.content).toBe('toolUse lookup');
    expect(result).toEqual({
      role: 'assistant',
      content: { type: 'text', text: '' },
      toolUse: [{ type: 'tool_use', id: 'use-1', name: 'lookup', input: { city: 'Oslo' } }],
      model: 'scripted',
      stopReason: 'toolUse',
    });
    expect(llm.requests[1]).toMatchObject({
      tools: [
        {
          name: 'lookup',
          description: 'Looks up the weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
      toolChoice: 'required',
    });
    expect(ran).toEqual([]);
    expect(llm.requests).toHaveLength(3);
  });

  it('sends earlier tool calls and their results as the assistant’s calls and the tool’s messages', async () => {
    const tool = probe(async (scope) => {
      const reply = await scope.sample({
        messages: [
          { role: 'user', content: { type: 'text', text: 'Weather in Oslo?' } },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Looking.' },
              { type: 'tool_use', id: 'use-1', name: 'lookup', input: { city: 'Oslo' } },
            ],
          },
          {
            role: 'user',
            content: [{ type: 'tool_result', toolUseId: 'use-1', content: [{ type: 'text', text: 'Sunny, 18 °C' }] }],
          },
        ],
        maxTokens: 100,
        tools: [{ name: 'lookup', inputSchema: { type: 'object' } }],
      });
      return reply.content.text;
    });
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'probe', arguments: {} }] },
      { content: 'Sunny in Oslo.' },
      { content: 'Done.' },
    ]);
    const done = await run(createAgent({ name: 'a', tools: [tool] }), 'go', { llm, onSampling: () => true });
    expect(done.state.messages.find((m) => m.role === 'tool')?.content).toBe('Sunny in Oslo.');
    expect(llm.requests[1]?.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      {
        role: 'assistant',
        content: 'Looking.',
        toolCalls: [{ id: 'use-1', name: 'lookup', arguments: '{"city":"Oslo"}' }],
      },
      { role: 'tool', toolCallId: 'use-1', name: 'lookup', content: 'Sunny, 18 °C' },
    ]);
    expect(llm.requests[1]?.toolChoice).toBe('auto');
  });

  it('fails the sampling, saying so, when the model calls a tool the request did not offer', async () => {
    const tool = probe(async (scope) => {
      const reply = await scope.sample({
        messages: [{ role: 'user', content: { type: 'text', text: 'Go.' } }],
        maxTokens: 10,
        tools: [{ name: 'lookup', inputSchema: { type: 'object' } }],
      });
      return reply.content.text;
    });
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'probe', arguments: {} }] },
      { toolCalls: [{ name: 'delete_everything', arguments: {} }] },
      { content: 'Done.' },
    ]);
    const done = await run(createAgent({ name: 'a', tools: [tool] }), 'go', { llm, onSampling: () => true });
    expect(done.state.messages.find((m) => m.role === 'tool')?.content).toContain(
      'the model called "delete_everything", a tool the sampling request did not offer',
    );
  });

  it('relays a call’s items, elicitation and sampling to whoever the tool run names for that call', async () => {
    const tool = probe(async (scope) => {
      scope.reportProgress({ progress: 1 });
      const answer = await scope.elicit({ message: 'OK?', schema: { type: 'object', properties: {} } });
      const reply = await scope.sample({ messages: [], maxTokens: 5 });
      return `${answer.action} ${reply.content.text}`;
    });
    const toolRun = createToolRun();
    const items: RunItem[] = [];
    const event = await toolRun.call(
      tool,
      {},
      {
        onItem: (item) => items.push(item),
        relay: {
          elicit: async () => ({ action: 'decline' }),
          sample: async () => ({
            role: 'assistant',
            content: { type: 'text', text: 'from the client' },
            model: 'theirs',
          }),
        },
      },
    );
    await toolRun.close();
    expect(event).toMatchObject({ type: 'toolCompleted', output: 'decline from the client' });
    expect(items).toMatchObject([{ type: 'progress', progress: 1, tool: 'probe' }]);
  });
});

describe('what a tool gives MCP clients', () => {
  it('keeps result parts and a structured result on the call’s event; the model reads the output', async () => {
    const tool = defineTool({
      name: 'weather',
      description: 'The weather',
      parameters: z.object({}),
      outputSchema: z.object({ celsius: z.number() }),
      execute: () => ({
        output: '21 °C',
        content: [
          { type: 'text', text: '21 °C' },
          { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        ],
        structured: { celsius: 21 },
      }),
    });
    expect(tool.spec.outputSchema).toMatchObject({ type: 'object', properties: { celsius: { type: 'number' } } });
    expect(tool.spec.outputSchema).not.toHaveProperty('$schema');
    const toolRun = createToolRun();
    const event = await toolRun.call(tool, {});
    await toolRun.close();
    expect(event).toMatchObject({
      type: 'toolCompleted',
      output: '21 °C',
      content: [{ type: 'text' }, { type: 'audio', mimeType: 'audio/wav' }],
      structured: { celsius: 21 },
    });
  });

  it('keeps a JSON Schema’s own $schema aside for MCP clients, and sends models none', () => {
    const dialect = 'https://json-schema.org/draft/2020-12/schema';
    const tool = defineTool({
      name: 'given',
      description: 'A JSON Schema as written',
      parameters: { $schema: dialect, type: 'object', properties: { a: { type: 'string' } } },
      execute: () => 'ok',
    });
    expect(tool.spec.parameters).not.toHaveProperty('$schema');
    expect(tool.spec.schemaDialect).toBe(dialect);
    const zod = defineTool({ name: 'zod', description: 'From zod', parameters: z.object({}), execute: () => 'ok' });
    expect(zod.spec).not.toHaveProperty('schemaDialect');
  });
});
