// The README's sections on the client, mcp.json, the MCPAgent and Manus with MCP: each snippet runs
// as written (against the everything server from node_modules) and prints what the README says.
import { describe, expect, it } from 'vitest';
import { blocksUnder, processesIn, snippetRunner } from './readmeSnippets.js';

const runSnippet = snippetRunner();

/** The snippet of a section and the output the README shows for it. */
async function example(heading: string): Promise<{ code: string; printed: string }> {
  const [code = '', ...moreCode] = await blocksUnder(heading, 'ts');
  const [printed = '', ...morePrinted] = await blocksUnder(heading, 'text');
  expect([moreCode, morePrinted]).toEqual([[], []]);
  return { code, printed };
}

describe('the README', () => {
  it('the client: connects, runs a tool of the server, and leaves no process', async () => {
    const { code, printed } = await example('The client: `createMcpClient`');
    const { dir, stdout } = await runSnippet(code);
    expect(stdout).toBe(printed);
    expect(processesIn(dir)).toEqual([]);
  });

  it('the config file: the example file loads as shown', async () => {
    const [file = ''] = await blocksUnder('The config file: `config/mcp.json`', 'json');
    const { code, printed } = await example('The config file: `config/mcp.json`');
    expect((await runSnippet(code, { 'config/mcp.json': file })).stdout).toBe(printed);
  });

  it('the MCPAgent: finishes through terminate, and close() ends its server', async () => {
    const { code, printed } = await example('The MCPAgent: `createMcpAgent`');
    const { dir, stdout } = await runSnippet(code);
    expect(stdout).toBe(printed);
    expect(processesIn(dir)).toEqual([]);
  });

  it('Manus with MCP: its own tools and the server’s, over two runs of a session', async () => {
    const { code, printed } = await example('Manus with MCP servers: `withMcp`');
    const { dir, stdout } = await runSnippet(code);
    expect(stdout).toBe(printed);
    expect(processesIn(dir)).toEqual([]);
  });
});
