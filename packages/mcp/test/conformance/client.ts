// The client the MCP conformance suite tests, started once per client scenario as
// `node client.ts <server url>` with the scenario in MCP_CONFORMANCE_SCENARIO (see
// examples/clients/typescript/everything-client.ts of @modelcontextprotocol/conformance 0.1.16).
// It is our createMcpClient as an agent uses it: connect, list the tools, and have a scripted
// model call the tool the scenario's server offers. Node runs this file as it is (type stripping),
// so it imports the built packages; `pnpm test` builds them first.
import { createAgent, run, terminate } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { createMcpClient, type McpOAuthOptions, type McpRedirect, mcpToolName, withMcp } from '@openmanus/mcp';

const SERVER = 'conformance';
/** Our Client ID Metadata Document, as the suite's own client names it (the suite never fetches it). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** The suite's authorization servers grant at once: the redirect is followed here, as a browser would. */
const approve: McpRedirect = async (url) => {
  const response = await fetch(url, { redirect: 'manual' });
  const location = new URL(response.headers.get('location') ?? '', url);
  return { code: location.searchParams.get('code') ?? '', state: location.searchParams.get('state') };
};

/** What the suite passes a scenario's client in MCP_CONFORMANCE_CONTEXT (its ClientConformanceContextSchema). */
interface Context {
  readonly client_id?: string;
  readonly client_secret?: string;
  readonly private_key_pem?: string;
  readonly signing_algorithm?: string;
  /** Cross-app access: the identity provider's token endpoint, our client there, and the person's ID token. */
  readonly idp_token_endpoint?: string;
  readonly idp_client_id?: string;
  readonly idp_id_token?: string;
}

/** `auth` of the server's config for an auth scenario: credentials or an ID token from the context, else a sign-in. */
function authOf(scenario: string): McpOAuthOptions | undefined {
  if (!scenario.startsWith('auth/')) return undefined;
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Context;
  const { client_id: clientId, client_secret: clientSecret, private_key_pem: privateKey } = context;
  if (scenario.startsWith('auth/client-credentials-') && clientId) {
    return {
      clientCredentials: privateKey
        ? { clientId, privateKey, ...(context.signing_algorithm ? { algorithm: context.signing_algorithm } : {}) }
        : { clientId, clientSecret: clientSecret ?? '' },
    };
  }
  const { idp_token_endpoint: idpTokenEndpoint, idp_client_id: idpClientId, idp_id_token: idToken } = context;
  if (scenario.startsWith('auth/cross-app-access-') && clientId && idpTokenEndpoint && idpClientId && idToken) {
    return {
      crossApp: { idpTokenEndpoint, idpClientId, idToken, clientId, ...(clientSecret ? { clientSecret } : {}) },
    };
  }
  return {
    redirect: approve,
    clientMetadataUrl: CLIENT_METADATA_URL,
    clientMetadata: { client_name: 'openmanus-conformance' },
    ...(clientId ? { clientId, ...(clientSecret ? { clientSecret } : {}) } : {}),
  };
}

/** The tool each scenario's server offers (initialize only lists them; every auth scenario has `test-tool`). */
function toolOf(scenario: string): { readonly tool: string; readonly args: Record<string, unknown> } | undefined {
  if (scenario.startsWith('auth/')) return { tool: 'test-tool', args: {} };
  if (scenario === 'tools_call') return { tool: 'add_numbers', args: { a: 5, b: 3 } };
  if (scenario === 'sse-retry') return { tool: 'test_reconnection', args: {} };
  if (scenario === 'elicitation-sep1034-client-defaults') return { tool: 'test_client_elicitation_defaults', args: {} };
  return undefined;
}

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const url = process.argv.at(-1) ?? '';
const auth = authOf(scenario);
const client = createMcpClient({
  servers: { [SERVER]: { type: 'http', url, ...(auth ? { auth } : {}) } },
  clientInfo: { name: 'openmanus-conformance', version: '1.0.0' },
  // Within the suite's own limit on a client, so that a failure is reported rather than cut short.
  connectTimeoutMs: 20_000,
  callTimeoutMs: 20_000,
});

try {
  await client.connect();
  const status = client.status()[SERVER];
  if (status?.state !== 'connected') throw new Error(`could not connect to ${url}: ${status?.error}`);
  console.log(`connected; tools: ${status.tools.join(', ') || 'none'}`);

  const call = toolOf(scenario);
  if (call) {
    const name = mcpToolName(SERVER, call.tool);
    const agent = withMcp(createAgent({ name: 'conformance', tools: [terminate] }), client);
    const llm = scriptedLlm([{ toolCalls: [{ name, arguments: call.args }] }, { content: 'Done.' }]);
    // The person accepts every question as it comes, leaving the fields as they are: the client
    // then answers with the form's defaults (SEP-1034).
    const result = await run(agent, `Call ${call.tool}.`, {
      llm,
      onElicitation: () => ({ action: 'accept', content: {} }),
    });
    const [observed] = result.state.messages.flatMap((message) => (message.role === 'tool' ? [message] : []));
    console.log(`${name}: ${observed?.content}`);
    if (!observed || observed.content.startsWith('Error')) throw new Error(`${name} failed`);
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await client.close();
}
