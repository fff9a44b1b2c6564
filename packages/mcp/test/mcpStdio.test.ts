// Our tools served over stdio by a process of their own (fixtures/serveStdio.mjs), as MCP hosts spawn servers.
import { fileURLToPath } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { processesMatching } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { PIXEL } from './fixtures/tools.mjs';
import { callTool, connectClient, newMarker, tempWorkspace, textOf } from './helpers.js';

const script = fileURLToPath(new URL('./fixtures/serveStdio.mjs', import.meta.url));

async function spawnServer() {
  const marker = newMarker();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script],
    env: { PATH: process.env.PATH ?? '', WORKSPACE: await tempWorkspace(), MARKER: marker },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = await connectClient(transport);
  return { client, transport, marker, stderr: () => stderr };
}

describe('createMcpServer over stdio', () => {
  it('serves the tools to a client that spawned it: schemas, text, images, errors', async () => {
    const { client, stderr } = await spawnServer();
    try {
      expect(client.getInstructions()).toBe('Tools for tests.');
      expect(client.getServerVersion()).toEqual({ name: 'openmanus', version: '0.1.0' });
      const { tools } = await client.listTools();
      expect(tools.find((tool) => tool.name === 'plan_trip')?.inputSchema.properties).toMatchObject({
        mode: { enum: ['train', 'bus', 'ferry'] },
      });
      expect(await callTool(client, 'snapshot')).toEqual({
        content: [
          { type: 'text', text: 'A 1×1 PNG.' },
          { type: 'image', data: PIXEL, mimeType: 'image/png' },
        ],
      });
      const invalid = await callTool(client, 'plan_trip', { mode: 'walk' });
      expect(invalid.isError).toBe(true);
      expect(textOf(invalid)).toMatch(/^Error: invalid arguments for plan_trip:\n✖ Invalid option: expected one of/);
      expect(await callTool(client, 'explode')).toMatchObject({ isError: true });
      // stdout carries the protocol only: nothing was written around it.
      expect(stderr()).toBe('');
    } finally {
      await client.close();
    }
  });

  it('ends when the client closes its stdin, closing what the session opened', async () => {
    const { client, transport, marker } = await spawnServer();
    await callTool(client, 'helper_process');
    await expect.poll(() => processesMatching(`1000.${marker}`)).toHaveLength(1);
    const pid = transport.pid;
    await client.close();
    // The SDK client gives the server 2 s to exit by itself before it sends SIGTERM, which would
    // leave the helper behind: the server ended on its own, closing its session's helper first.
    expect(processesMatching(`1000.${marker}`)).toEqual([]);
    expect(processesMatching(script)).not.toContain(pid);
  });
});
