// The README's sections on the client, mcp.json, the MCPAgent and Manus with MCP: each snippet runs
// as written (against the everything server from node_modules) and prints what the README says.
import { describe, expect, it } from 'vitest';
import { processesIn, readmeOf, snippetRunner } from '../../core/test/readmeCheck.js';
import { packageDir } from './helpers.js';

const { blocks } = await readmeOf(packageDir);
const runSnippet = snippetRunner(packageDir);

/** The snippet of a section and the output the README shows for it. */
async function example(heading: string): Promise<{ code: string; printed: string }> {
  const [code = '', ...moreCode] = blocks(`## ${heading}`, 'ts');
  const [printed = '', ...morePrinted] = blocks(`## ${heading}`, 'text');
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
    const [file = ''] = blocks('## The config file: `config/mcp.json`', 'json');
    const { code, printed } = await example('The config file: `config/mcp.json`');
    expect((await runSnippet(code, { files: { 'config/mcp.json': file } })).stdout).toBe(printed);
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
