// Our client against the reference "everything" server from npm, over stdio: its tools as ours,
// their schemas untouched, images, resources, errors, instructions, and an environment of its own.
import { createAgent, run, terminate } from '@openmanus/core';
import { processesMatching, scriptedLlm } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withMcp } from '../src/agents/withMcp.js';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import { block, everythingScript, fromServer, newMarker, observe, toolNamed } from './helpers.js';

describe('the everything server over stdio', () => {
  const tag = newMarker();
  let client: McpClient;
  beforeAll(async () => {
    // A secret of ours that the server must not see; it gets the env its config gives it.
    process.env.OPENMANUS_TEST_SECRET = 'sk-do-not-pass-on';
    client = createMcpClient({
      servers: {
        everything: { command: process.execPath, args: [everythingScript, 'stdio', tag], env: { GREETING: 'hello' } },
      },
    });
    await client.connect();
  });
  afterAll(async () => {
    delete process.env.OPENMANUS_TEST_SECRET;
    await client.close();
    expect(processesMatching(tag)).toEqual([]);
  });

  it('offers its tools as mcp_everything_* — those of the capabilities we declare, its resources and prompts — leaving out the one that only runs as a task', () => {
    expect(client.tools().map((t) => t.spec.name)).toEqual([
      'mcp_everything_echo',
      'mcp_everything_get-annotated-message',
      'mcp_everything_get-env',
      'mcp_everything_get-resource-links',
      'mcp_everything_get-resource-reference',
      'mcp_everything_get-structured-content',
      'mcp_everything_get-sum',
      'mcp_everything_get-tiny-image',
      'mcp_everything_gzip-file-as-resource',
      'mcp_everything_toggle-simulated-logging',
      'mcp_everything_toggle-subscriber-updates',
      'mcp_everything_trigger-long-running-operation',
      'mcp_everything_get-roots-list',
      'mcp_everything_trigger-elicitation-request',
      'mcp_everything_trigger-url-elicitation',
      'mcp_everything_trigger-sampling-request',
      'mcp_everything_list_resources',
      'mcp_everything_read_resource',
      'mcp_everything_list_prompts',
      'mcp_everything_get_prompt',
    ]);
  });

  it('passes JSON Schemas through with their enums, defaults and descriptions (core drops only $schema)', () => {
    expect(toolNamed(client, 'mcp_everything_get-annotated-message').spec.parameters).toEqual({
      type: 'object',
      properties: {
        messageType: {
          type: 'string',
          enum: ['error', 'success', 'debug'],
          description: 'Type of message to demonstrate different annotation patterns',
        },
        includeImage: { default: false, description: 'Whether to include an example image', type: 'boolean' },
      },
      required: ['messageType'],
    });
  });

  it('has its instructions for the model', () => {
    expect(client.status().everything?.instructions).toMatch(/^# Everything Server – Server Instructions/);
  });

  it('calls tools and returns their text', async () => {
    expect((await observe(toolNamed(client, 'mcp_everything_echo'), { message: 'hi' })).output).toBe(
      block('everything', 'Echo: hi'),
    );
    expect((await observe(toolNamed(client, 'mcp_everything_get-sum'), { a: 2, b: 3 })).output).toBe(
      block('everything', 'The sum of 2 and 3 is 5.'),
    );
  });

  it('reports the server’s errors as error observations', async () => {
    const invalid = await observe(toolNamed(client, 'mcp_everything_get-sum'), { a: 'two', b: 3 });
    expect(invalid).toMatchObject({ isError: true });
    expect(fromServer('everything', invalid.output.replace(/^Error: /, ''))).toMatch(
      /Input validation error.*expected number, received string at a/,
    );
    const refused = await observe(toolNamed(client, 'mcp_everything_get-resource-reference'), { resourceId: 0 });
    expect(refused).toMatchObject({
      output: `Error: ${block('everything', 'Invalid resourceId: 0. Must be a finite positive integer.')}`,
      isError: true,
    });
  });

  it('attaches its image', async () => {
    const seen = await observe(toolNamed(client, 'mcp_everything_get-tiny-image'), {});
    expect(seen.output).toBe(
      block(
        'everything',
        "Here's the image you requested:\n[image attached: image/png, 3.9 KB]\nThe image above is the MCP logo.",
      ),
    );
    expect(seen.image?.mimeType).toBe('image/png');
    expect(
      Buffer.from(seen.image?.base64 ?? '', 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
  });

  it('summarises its embedded resources and resource links', async () => {
    const text = await observe(toolNamed(client, 'mcp_everything_get-resource-reference'), {
      resourceType: 'Text',
      resourceId: 1,
    });
    expect(fromServer('everything', text.output)).toMatch(
      /^Returning resource reference for Resource 1:\n\[resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\)\]\nResource 1: This is a plaintext resource/,
    );
    const blob = await observe(toolNamed(client, 'mcp_everything_get-resource-reference'), {
      resourceType: 'Blob',
      resourceId: 2,
    });
    // Its blob holds the time it was made: the size varies by a byte or two.
    expect(fromServer('everything', blob.output)).toMatch(
      /\n\[resource demo:\/\/resource\/dynamic\/blob\/2 \(text\/plain\): \d+ bytes of binary data, not shown\]\n/,
    );
    const links = await observe(toolNamed(client, 'mcp_everything_get-resource-links'), { count: 2 });
    expect(fromServer('everything', links.output)).toContain(
      '[resource link: demo://resource/dynamic/text/2 "Text Resource 2" (text/plain) — Resource 2: plaintext resource]',
    );
  });

  it("asks the run's host its questions and the run's model for its completions", async () => {
    const agent = withMcp(createAgent({ name: 'tester', tools: [terminate] }), client);
    const llm = scriptedLlm(
      [
        { toolCalls: [{ name: 'mcp_everything_trigger-elicitation-request', arguments: {} }] },
        { toolCalls: [{ name: 'mcp_everything_trigger-sampling-request', arguments: { prompt: 'Say hi' } }] },
        { content: 'Hi there.' },
        { content: 'Done.' },
      ],
      'scripted-model',
    );
    const result = await run(agent, 'Go.', {
      llm,
      onElicitation: () => ({ action: 'accept', content: { name: 'Ada Lovelace' } }),
      onSampling: () => true,
    });
    const [asked, sampled] = result.state.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
    // The form's default is sent for the field left as it was.
    expect(asked).toContain('User inputs:');
    expect(asked).toContain('Ada Lovelace');
    expect(asked).toContain('It was a dark and stormy night.');
    expect(JSON.parse(fromServer('everything', String(sampled)).replace(/^LLM sampling result: \n/, ''))).toMatchObject(
      {
        role: 'assistant',
        model: 'scripted-model',
        content: { type: 'text', text: 'Hi there.' },
      },
    );
    expect(llm.requests[2]?.messages.map((m) => m.content)).toEqual([
      'You are a helpful test server.',
      'Resource trigger-sampling-request context: Say hi',
    ]);
  });

  it("puts its URL for the person to the run's host, as the server's", async () => {
    const agent = withMcp(createAgent({ name: 'tester', tools: [terminate] }), client);
    const url = 'https://example.com/authorize';
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'mcp_everything_trigger-url-elicitation', arguments: { url, elicitationId: 'e-7' } }] },
      { content: 'Done.' },
    ]);
    const asked: unknown[] = [];
    const result = await run(agent, 'Go.', {
      llm,
      onElicitation: (request) => {
        asked.push(request);
        return { action: 'accept', content: {} };
      },
    });
    expect(asked).toEqual([
      {
        mode: 'url',
        message: 'Please open the link to complete this action.',
        url,
        elicitationId: 'e-7',
        server: 'everything',
      },
    ]);
    const [said] = result.state.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
    expect(fromServer('everything', String(said))).toContain('User completed the URL elicitation flow.');
  });

  it('starts the server with its configured env and the SDK’s few safe variables, never our secrets', async () => {
    const env = JSON.parse(
      fromServer('everything', (await observe(toolNamed(client, 'mcp_everything_get-env'), {})).output),
    ) as Record<string, string>;
    expect(env.GREETING).toBe('hello');
    expect(env.PATH).toBe(process.env.PATH);
    expect(Object.keys(env).sort()).toEqual(
      ['GREETING', 'HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'].filter(
        (k) => k === 'GREETING' || process.env[k],
      ),
    );
    expect(JSON.stringify(env)).not.toContain('sk-do-not-pass-on');
  });
});
