// Our client against our own fixture server over stdio (a real process speaking the protocol):
// results of every kind, tools that come and go, a call never answered, a server dying mid-call.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processesMatching } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import { block, eventually, fixtureServer, fromServer, newMarker, nextEvent, observe, toolNamed } from './helpers.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('a client of our fixture server over stdio', () => {
  const tag = newMarker();
  let client: McpClient;
  beforeAll(async () => {
    client = createMcpClient({
      servers: { fixture: fixtureServer('fixture', tag) },
      // Every call (and the ping after the hang's time-out) must answer within it: room for a
      // loaded machine, short enough for the hang test to wait out.
      callTimeoutMs: 10_000,
      reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
    });
    await client.connect();
  });
  afterAll(async () => {
    await client.close();
    expect(processesMatching(tag)).toEqual([]);
  });

  it('names its tools mcp_fixture_{tool}, passes their JSON Schemas through, and takes a tool without a description', () => {
    const names = client.tools().map((t) => t.spec.name);
    expect(names).toEqual(expect.arrayContaining(['mcp_fixture_echo', 'mcp_fixture_hang', 'mcp_fixture_terminate']));
    expect(toolNamed(client, 'mcp_fixture_echo').spec).toMatchObject({
      description: block('fixture', 'Repeats the text.'),
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    expect(toolNamed(client, 'mcp_fixture_terminate').spec.parameters).toMatchObject({
      properties: { status: { type: 'string', enum: ['success', 'failure'] } },
    });
    expect(toolNamed(client, 'mcp_fixture_nodesc').spec.description).toBe(
      'nodesc, a tool of the MCP server "fixture".',
    );
    expect(client.status().fixture).toMatchObject({
      state: 'connected',
      transport: 'stdio',
      instructions: 'Fixture server fixture: echo repeats text.',
    });
  });

  it('marks only the server’s own terminate as finishing the run', () => {
    const terminal = client
      .tools()
      .filter((t) => t.spec.terminal)
      .map((t) => t.spec.name);
    expect(terminal).toEqual(['mcp_fixture_terminate']);
  });

  it('returns text, and an isError result as an error observation', async () => {
    expect(await observe(toolNamed(client, 'mcp_fixture_echo'), { text: 'hi' })).toMatchObject({
      output: block('fixture', 'fixture echo: hi'),
    });
    const failed = await observe(toolNamed(client, 'mcp_fixture_fail'), { message: 'disk full' });
    expect(failed).toMatchObject({ output: `Error: ${block('fixture', 'disk full')}`, isError: true });
    const invalid = await observe(toolNamed(client, 'mcp_fixture_echo'), { text: 42 });
    expect(invalid.isError).toBe(true);
    expect(fromServer('fixture', invalid.output.replace(/^Error: /, ''))).toMatch(/text/);
  });

  it('attaches the first image for vision models and summarises the others', async () => {
    const seen = await observe(toolNamed(client, 'mcp_fixture_image'), {});
    expect(seen.image).toEqual({ base64: PNG, mimeType: 'image/png' });
    expect(seen.output).toBe(
      block(
        'fixture',
        [
          'a red dot',
          '[image attached: image/png, 70 bytes]',
          '[another image (image/png, 70 bytes) not shown: one image per result]',
          '[image (image/svg+xml, 6 bytes) not shown: models take PNG, JPEG, GIF and WebP]',
        ].join('\n'),
      ),
    );
  });

  it('summarises embedded resources (uri, type, an excerpt of the text) and resource links', async () => {
    const seen = await observe(toolNamed(client, 'mcp_fixture_resource'), {});
    expect(seen.output).toBe(
      block(
        'fixture',
        [
          '[resource file:///long.txt (text/plain)]',
          `${'x'.repeat(2000)}`,
          '…[500 more characters]',
          '[resource file:///data.bin (application/octet-stream): 4 bytes of binary data, not shown]',
          '[resource link: file:///report.md "report" (text/markdown) — the report]',
        ].join('\n'),
      ),
    );
  });

  it('shows structured content as JSON when there is no text', async () => {
    expect((await observe(toolNamed(client, 'mcp_fixture_structured'), {})).output).toBe(
      block('fixture', '{"temperature":21,"unit":"C"}'),
    );
  });

  it('follows the server’s list_changed: a tool added, changed and removed, each callable as it is', async () => {
    const added = nextEvent(client, (e) => e.type === 'toolsChanged');
    await observe(toolNamed(client, 'mcp_fixture_add_tool'), { name: 'late' });
    expect(await added).toMatchObject({ type: 'toolsChanged', server: 'fixture' });
    expect((await observe(toolNamed(client, 'mcp_fixture_late'), {})).output).toBe(block('fixture', 'i am late'));

    const changed = nextEvent(client, (e) => e.type === 'toolsChanged');
    await observe(toolNamed(client, 'mcp_fixture_describe_tool'), { name: 'late', description: 'Says it late.' });
    await changed;
    expect(toolNamed(client, 'mcp_fixture_late').spec.description).toBe(block('fixture', 'Says it late.'));

    const removed = nextEvent(client, (e) => e.type === 'toolsChanged');
    await observe(toolNamed(client, 'mcp_fixture_remove_tool'), { name: 'late' });
    await removed;
    expect(client.tools().map((t) => t.spec.name)).not.toContain('mcp_fixture_late');
  });

  it('a call the server never answers fails after the time limit with a clear error; the server stays', async () => {
    // The server never answers: without the limit, the test's own time-out would fail it.
    const seen = await observe(toolNamed(client, 'mcp_fixture_hang'), {});
    expect(seen).toMatchObject({
      output: 'Error: the MCP server "fixture" did not answer within 10000 ms',
      isError: true,
    });
    expect(client.status().fixture?.state).toBe('connected');
    expect((await observe(toolNamed(client, 'mcp_fixture_echo'), { text: 'still here' })).output).toBe(
      block('fixture', 'fixture echo: still here'),
    );
  });

  it('a server that dies mid-call: the call fails, its tools are withdrawn, and it is reconnected', async () => {
    const pid = fromServer('fixture', (await observe(toolNamed(client, 'mcp_fixture_pid'), {})).output);
    const disconnected = nextEvent(client, (e) => e.type === 'disconnected');
    const connected = nextEvent(client, (e) => e.type === 'connected');
    const seen = await observe(toolNamed(client, 'mcp_fixture_crash'), {});
    expect(seen.isError).toBe(true);
    expect(seen.output).toMatch(
      /^Error: the MCP server "fixture" was lost during the call: the server process ended: .*crashing on purpose; its tools are withdrawn until it reconnects$/s,
    );
    expect(await disconnected).toMatchObject({
      server: 'fixture',
      error: expect.stringContaining('crashing on purpose'),
    });
    await connected;
    expect(client.status().fixture?.state).toBe('connected');
    const again = fromServer('fixture', (await observe(toolNamed(client, 'mcp_fixture_pid'), {})).output);
    expect(again).toMatch(/^\d+$/);
    expect(again).not.toBe(pid);
  });

  it('a server that stops answering altogether is withdrawn, ended and started again', async () => {
    const pid = Number(fromServer('fixture', (await observe(toolNamed(client, 'mcp_fixture_pid'), {})).output));
    const connected = nextEvent(client, (e) => e.type === 'connected');
    const seen = await observe(toolNamed(client, 'mcp_fixture_freeze'), {});
    expect(seen).toMatchObject({
      output:
        'Error: the MCP server "fixture" was lost during the call: it stopped answering (no reply within 10000 ms, ' +
        'not even to a ping); its tools are withdrawn until it reconnects',
      isError: true,
    });
    expect(client.tools()).toEqual([]);
    await connected;
    expect(processesMatching(tag)).not.toContain(pid);
    expect((await observe(toolNamed(client, 'mcp_fixture_echo'), { text: 'thawed' })).output).toBe(
      block('fixture', 'fixture echo: thawed'),
    );
  });
});

describe('servers that cannot be used', () => {
  it('one that never answers: connecting fails after the time limit, is retried with backoff, and close() ends it', async () => {
    const tag = newMarker();
    const client = createMcpClient({
      servers: { silent: fixtureServer('silent', tag, '--silent') },
      connectTimeoutMs: 150,
      reconnect: { initialDelayMs: 20, maxDelayMs: 80 },
    });
    const waits: number[] = [];
    client.subscribe((e) => {
      if (e.type === 'connectFailed') waits.push(e.retryInMs);
    });
    const fourth = nextEvent(client, () => waits.length === 4);
    await client.connect();
    expect(client.status().silent).toMatchObject({
      state: 'reconnecting',
      error: 'did not complete the MCP handshake within 150 ms',
      tools: [],
    });
    await fourth;
    // Each failure waits twice as long as the one before, up to the most.
    expect(waits).toEqual([20, 40, 80, 80]);
    await client.close();
    expect(client.status().silent?.state).toBe('closed');
    expect(processesMatching(tag)).toEqual([]);
  });

  it('one that never lists its tools: close() does not wait for it', async () => {
    const tag = newMarker();
    const asked = join(tmpdir(), `${tag}-asked`);
    // Limits of ten minutes: a close() that waited for the listing would fail at the test's time-out.
    const client = createMcpClient({
      servers: { mute: fixtureServer('mute', tag, '--mute-list', asked) },
      connectTimeoutMs: 600_000,
      callTimeoutMs: 600_000,
    });
    const connecting = client.connect();
    const connected = nextEvent(client, () => true);
    await eventually(() => existsSync(asked));
    await rm(asked);
    expect(client.status().mute?.state).toBe('connecting');
    await client.close();
    await connecting;
    expect(processesMatching(tag)).toEqual([]);
    // Closing is not a failure to report.
    expect(await Promise.race([connected, 'no event'])).toBe('no event');
  });

  it('a program that does not exist is reported as such', async () => {
    const client = createMcpClient({ servers: { nowhere: { command: 'no-such-mcp-server-xyz' } } });
    await client.connect();
    expect(client.status().nowhere?.error).toBe('could not start "no-such-mcp-server-xyz" (no such program)');
    await client.close();
  });
});

describe('two servers whose tool names would be the same', () => {
  it('get a suffix, and each name calls its own server', async () => {
    const tag = newMarker();
    const client = createMcpClient({ servers: { 'a.b': fixtureServer('a.b', tag), a_b: fixtureServer('a_b', tag) } });
    await client.connect();
    const echoes = client.tools().filter((t) => t.spec.name.startsWith('mcp_a_b_echo'));
    expect(echoes.map((t) => t.spec.name).sort()).toEqual(['mcp_a_b_echo', 'mcp_a_b_echo_2']);
    const answers = await Promise.all(echoes.map(async (t) => (await observe(t, { text: 'x' })).output));
    expect(answers.sort()).toEqual([block('a.b', 'a.b echo: x'), block('a_b', 'a_b echo: x')]);
    await client.close();
    expect(processesMatching(tag)).toEqual([]);
  });
});
