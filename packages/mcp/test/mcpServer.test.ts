// Our tools served over MCP, driven by the official SDK client over streamable HTTP on 127.0.0.1.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, type Tool } from '@openmanus/core';
import { processesMatching } from '@openmanus/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { HttpServing } from '../src/server/http.js';
import { createMcpServer, type McpToolServer } from '../src/server/mcpServer.js';
import { PIXEL, testTools } from './fixtures/tools.mjs';
import { callTool, eventually, httpClient, newMarker, tempWorkspace, textOf } from './helpers.js';

let workspace: string;
let marker: string;
let tools: Tool[];
let server: McpToolServer;
let serving: HttpServing;
const clients: Client[] = [];

beforeEach(async () => {
  workspace = await tempWorkspace();
  marker = newMarker();
  tools = testTools({ workspace, marker });
  server = createMcpServer(tools, { workspace });
  serving = await server.serveHttp({ port: 0 });
});
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await server.close();
});

const connect = async () => {
  const connection = await httpClient(serving.url, serving.token);
  clients.push(connection.client);
  return connection;
};

const helpers = () => processesMatching(`1000.${marker}`);

describe('createMcpServer: our tools for any MCP client', () => {
  it('lists every tool with its JSON Schema as it is: enums, item types and bounds kept', async () => {
    const { client } = await connect();
    const listed = (await client.listTools()).tools;
    expect(listed.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.spec.name));
    for (const tool of tools) {
      const served = listed.find((entry) => entry.name === tool.spec.name);
      expect(served?.description).toBe(tool.spec.description);
      expect(served?.inputSchema).toEqual(tool.spec.parameters);
    }
    const properties = (name: string) => listed.find((tool) => tool.name === name)?.inputSchema.properties;
    expect(properties('plan_trip')).toMatchObject({
      mode: { type: 'string', enum: ['train', 'bus', 'ferry'], description: 'How to travel between stops.' },
      stops: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: { city: { type: 'string' }, nights: { type: 'integer', minimum: 1 } },
          required: ['city', 'nights'],
        },
      },
    });
    expect(properties('str_replace_editor')).toMatchObject({
      command: { enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'] },
      view_range: { type: 'array', items: { type: 'integer' } },
    });
  });

  it('runs calls with their validated arguments and answers in MCP content', async () => {
    const { client } = await connect();
    expect(
      await callTool(client, 'plan_trip', {
        mode: 'train',
        stops: [
          { city: 'Kyoto', nights: 2 },
          { city: 'Nara', nights: 1 },
        ],
      }),
    ).toEqual({ content: [{ type: 'text', text: 'By train: Kyoto (2) → Nara (1)' }] });
    expect(await callTool(client, 'snapshot')).toEqual({
      content: [
        { type: 'text', text: 'A 1×1 PNG.' },
        { type: 'image', data: PIXEL, mimeType: 'image/png' },
      ],
    });
    const file = join(workspace, 'notes.md');
    await callTool(client, 'str_replace_editor', { command: 'create', path: file, file_text: 'Kyoto\nNara\n' });
    expect(await readFile(file, 'utf8')).toBe('Kyoto\nNara\n');
    const viewed = await callTool(client, 'str_replace_editor', { command: 'view', path: file });
    expect(viewed.isError).toBeUndefined();
    expect(textOf(viewed)).toContain('     2\tNara');
  });

  it('answers bad arguments and failures with isError results that say what went wrong', async () => {
    const { client } = await connect();
    const invalid = await callTool(client, 'plan_trip', { mode: 'plane', stops: [] });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(
      /^Error: invalid arguments for plan_trip:\n✖ .*\n {2}→ at mode\n✖ .*\n {2}→ at stops$/,
    );
    const failed = await callTool(client, 'explode');
    expect(failed).toEqual({
      content: [{ type: 'text', text: 'Error: explode failed: the fuse was lit' }],
      isError: true,
    });
    const outside = await callTool(client, 'str_replace_editor', { command: 'view', path: '/etc/passwd' });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toBe(
      `Error: The path /etc/passwd is outside the workspace ${workspace}; only files inside it can be used.`,
    );
    const unknown = client.callTool({ name: 'fly', arguments: {} });
    await expect(unknown).rejects.toThrow(McpError);
    await expect(unknown).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    await expect(unknown).rejects.toThrow(
      /Unknown tool "fly"; this server has str_replace_editor, terminate, plan_trip/,
    );
  });

  it('gives each session its own run: its own resources and data, released when it closes', async () => {
    const first = await connect();
    const second = await connect();
    const firstHelper = textOf(await callTool(first.client, 'helper_process'));
    expect(textOf(await callTool(first.client, 'helper_process'))).toBe(firstHelper);
    const secondHelper = textOf(await callTool(second.client, 'helper_process'));
    expect(secondHelper).not.toBe(firstHelper);
    expect(secondHelper.split(' of run ')[1]).not.toBe(firstHelper.split(' of run ')[1]);
    expect(helpers()).toHaveLength(2);

    // One session's editor history is not the other's: undo sees only its own edits.
    const file = join(workspace, 'a.txt');
    await callTool(first.client, 'str_replace_editor', { command: 'create', path: file, file_text: 'one\n' });
    const foreignUndo = await callTool(second.client, 'str_replace_editor', { command: 'undo_edit', path: file });
    expect(foreignUndo.isError).toBe(true);
    expect(existsSync(file)).toBe(true);

    await first.transport.terminateSession();
    await eventually(() => helpers().length === 1);
    expect(textOf(await callTool(second.client, 'helper_process'))).toBe(secondHelper);
  });

  it('ends a session whose client vanished once it has been idle, not one whose client listens', async () => {
    const idle = await server.serveHttp({ port: 0, idleSessionMs: 150 });
    const listening = await httpClient(idle.url, idle.token);
    clients.push(listening.client);
    const listeningHelper = textOf(await callTool(listening.client, 'helper_process'));
    const vanishing = await httpClient(idle.url, idle.token);
    await callTool(vanishing.client, 'helper_process');
    expect(helpers()).toHaveLength(2);
    // Gone without ending its session (no DELETE): its connections just close.
    await vanishing.transport.close();
    await eventually(() => helpers().length === 1);
    // The other client, idle as long but with its stream open, still has its session and its helper.
    expect(textOf(await callTool(listening.client, 'helper_process'))).toBe(listeningHelper);
    expect(helpers()).toHaveLength(1);
  });

  it('passes a client’s cancellation on to the tool', async () => {
    const { client } = await connect();
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait_for_cancel', arguments: {} }, undefined, { signal: controller.signal });
    await eventually(() => existsSync(join(workspace, 'waiting.txt')));
    controller.abort('no longer needed');
    await expect(call).rejects.toThrow();
    await eventually(() => existsSync(join(workspace, 'cancelled.txt')));
  });

  it('close() ends every session, closes their resources and stops listening', async () => {
    const { client } = await connect();
    await callTool(client, 'helper_process');
    expect(helpers()).toHaveLength(1);
    await server.close();
    expect(helpers()).toEqual([]);
    await expect(fetch(serving.url, { method: 'POST' })).rejects.toThrow();
  });

  it('refuses a toolset MCP cannot serve, saying why', () => {
    const [editor] = tools;
    if (!editor) throw new Error('no tools');
    expect(() => createMcpServer([editor, editor])).toThrow(
      'Two tools are named "str_replace_editor": MCP needs each name once.',
    );
    const scalar = defineTool({
      name: 'scalar',
      description: 'Takes a bare string.',
      parameters: z.string(),
      execute: (text) => text,
    });
    expect(() => createMcpServer([scalar])).toThrow(
      'The tool "scalar" does not take an object of arguments (its JSON Schema\'s type is "string"), which MCP requires.',
    );
  });
});
