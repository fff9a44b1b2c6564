// Both halves together: our MCP agent drives our own MCP server (createMcpServer over stdio, as
// `openmanus mcp` drives `openmanus mcp-server`), every schema, image and error carried through.
import { join } from 'node:path';
import { createOpenAiLlm, run } from '@openmanus/core';
import { processesMatching, type RecordedRequest, startOpenAiServer } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpAgent } from '../src/agents/mcpAgent.js';
import type { McpAgent } from '../src/agents/withMcp.js';
import { block, newMarker, tempWorkspace } from './helpers.js';

const marker = newMarker();
let agent: McpAgent;
beforeAll(async () => {
  const workspace = await tempWorkspace();
  agent = createMcpAgent({
    servers: {
      openmanus: {
        command: process.execPath,
        args: [join(import.meta.dirname, 'fixtures', 'serveStdio.mjs'), marker],
        env: { WORKSPACE: workspace, MARKER: marker },
      },
    },
  });
});
afterAll(async () => {
  await agent.close();
  expect(processesMatching(marker)).toEqual([]);
});

const toolMessages = (request: RecordedRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);

describe('our MCP agent on our MCP server', () => {
  it('sees the served tools with their full schemas, gets images and errors, and finishes', async () => {
    const server = await startOpenAiServer({
      script: [
        {
          toolCalls: [
            { name: 'mcp_openmanus_plan_trip', arguments: { mode: 'train', stops: [{ city: 'Nara', nights: 1 }] } },
            { name: 'mcp_openmanus_snapshot', arguments: {} },
            { name: 'mcp_openmanus_explode', arguments: {} },
          ],
        },
        { content: 'Planned.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    try {
      const llm = createOpenAiLlm({
        model: 'gpt-4o',
        apiKey: 'sk-test',
        baseURL: server.baseURL,
        maxRetries: 0,
        vision: true,
      });
      const result = await run(agent, 'Plan a trip to Nara', { llm });
      expect(result).toMatchObject({ finishReason: 'terminated', answer: 'Planned.' });
      const planTrip = server.requests[0]?.tools?.find(
        (t) => (t as { function: { name: string } }).function.name === 'mcp_openmanus_plan_trip',
      ) as { function: { parameters: { properties: Record<string, unknown> } } };
      expect(planTrip.function.parameters.properties.mode).toEqual({
        type: 'string',
        enum: ['train', 'bus', 'ferry'],
        description: 'How to travel between stops.',
      });
      expect(toolMessages(server.requests[1])).toEqual([
        block('openmanus', 'By train: Nara (1)'),
        block('openmanus', 'A 1×1 PNG.\n[image attached: image/png, 70 bytes]'),
        `Error: ${block('openmanus', 'explode failed: the fuse was lit')}`,
      ]);
      const parts = server.requests[1]?.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])) ?? [];
      expect(parts).toContainEqual({
        type: 'image_url',
        image_url: { url: expect.stringMatching(/^data:image\/png;base64,/) },
      });
      const instructions = server.requests[0]?.messages.find((m) => String(m.content).startsWith('Instructions from'));
      expect(String(instructions?.content)).toContain('Tools for tests.');
    } finally {
      await server.close();
    }
  });
});
