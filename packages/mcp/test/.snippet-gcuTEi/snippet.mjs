import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createStrReplaceEditor, defineTool, terminate } from '@openmanus/core';
import { createMcpServer } from '@openmanus/mcp';
import { z } from 'zod';

const population = { Kyoto: 1463723, Osaka: 2752412, Nara: 354630 };
const lookupPopulation = defineTool({
  name: 'lookup_population',
  description: 'Population of a city in Kansai (2020 census).',
  parameters: z.object({ city: z.enum(['Kyoto', 'Osaka', 'Nara']) }),
  execute: ({ city }) => `${city}: ${population[city]}`,
});
const workspace = `${process.cwd()}/workspace`;
const server = createMcpServer([lookupPopulation, createStrReplaceEditor({ workspace }), terminate]);

// Streamable HTTP at http://127.0.0.1:<port>/mcp (port 0: any free one; the default is 8000).
// Every request must carry the token: a fresh random one, unless you give `token`.
const { url, token } = await server.serveHttp({ port: 0 });

// Any MCP client can use it now; here, the official SDK's.
const client = new Client({ name: 'example', version: '1.0.0' });
const headers = { Authorization: `Bearer ${token}` };
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));

const { tools } = await client.listTools();
console.log(tools.map((tool) => tool.name)); // [ 'lookup_population', 'str_replace_editor', 'terminate' ]
console.log(tools[0].inputSchema.properties.city.enum); // [ 'Kyoto', 'Osaka', 'Nara' ]
const nara = await client.callTool({ name: 'lookup_population', arguments: { city: 'Nara' } });
console.log(nara.content); // [ { type: 'text', text: 'Nara: 354630' } ]
const tokyo = await client.callTool({ name: 'lookup_population', arguments: { city: 'Tokyo' } });
console.log(tokyo.isError, tokyo.content[0].text.split('\n')[0]); // true Error: invalid arguments for lookup_population:

await client.close();
await server.close(); // ends every session, closing what their tools opened
