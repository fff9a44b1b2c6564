// A server that answers a call with "open these URLs first" (-32042, URLElicitationRequired): the SDK's
// own McpServer over streamable HTTP on 127.0.0.1 throws the SDK's UrlElicitationRequiredError; our
// client puts each URL to the run's host as the server's URL question and calls again, once, when the
// person agreed — and says why not to the model otherwise. Hostile URL lists are refused unasked.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type ElicitRequestURLParams, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import {
  createAgent,
  type ElicitationRequest,
  type ElicitationResult,
  type RunOutcome,
  run,
  terminate,
} from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withMcp } from '../src/agents/withMcp.js';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import { MAX_REQUIRED_URLS } from '../src/client/urlsRequired.js';
import { block, serveSdkOverHttp } from './helpers.js';

const PAY: ElicitRequestURLParams = {
  mode: 'url',
  message: 'Confirm the payment with your bank.',
  url: 'https://bank.example/confirm?id=7',
  elicitationId: 'pay-7',
};

/** What the `pay` tool answers with the first time it is called (then: paid), and how often it was. */
let required: unknown[] = [PAY];
let always = false;
let calls = 0;

let http: Awaited<ReturnType<typeof serveSdkOverHttp>>;
let client: McpClient;
beforeAll(async () => {
  const sdk = new McpServer({ name: 'shop', version: '1.0.0' });
  sdk.registerTool('pay', { description: 'Pays the order.' }, () => {
    calls++;
    if (calls === 1 || always) throw new UrlElicitationRequiredError(required as ElicitRequestURLParams[]);
    return { content: [{ type: 'text', text: 'Paid.' }] };
  });
  http = await serveSdkOverHttp(sdk);
  client = createMcpClient({ servers: { shop: { type: 'http', url: http.url } } });
  await client.connect();
});
afterAll(async () => {
  await client.close();
  await http.close();
});
beforeEach(() => {
  required = [PAY];
  always = false;
  calls = 0;
});

/** A run calling `pay`, its host answering URL questions with `answer`; what the model was told. */
async function pay(answer: ElicitationResult['action']) {
  const asked: ElicitationRequest[] = [];
  const agent = withMcp(createAgent({ name: 'host', tools: [terminate] }), client);
  const outcome: RunOutcome = await run(agent, 'Pay the order.', {
    llm: scriptedLlm([{ toolCalls: [{ name: 'mcp_shop_pay', arguments: {} }] }, { content: 'Done.' }]),
    onElicitation: (request) => {
      asked.push(request);
      return answer === 'accept' ? { action: 'accept', content: {} } : { action: answer };
    },
  });
  const [observation] = outcome.state.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
  return { asked, observation };
}

describe('a server that needs URLs opened before a call', () => {
  it('puts each URL to the person as the server’s, and calls again once they agreed', async () => {
    const { asked, observation } = await pay('accept');
    expect(asked).toEqual([{ ...PAY, server: 'shop' }]);
    expect(observation).toBe(block('shop', 'Paid.'));
    expect(calls).toBe(2);
  });

  it('tells the model the person declined, without calling again', async () => {
    const { observation } = await pay('decline');
    expect(observation).toBe(
      'Error: the MCP server "shop" needs https://bank.example/confirm?id=7 opened first (Confirm the payment with your bank.), and the person declined',
    );
    expect(calls).toBe(1);
  });

  it('calls again only once, however often the server asks', async () => {
    always = true;
    const { asked, observation } = await pay('accept');
    expect(asked).toHaveLength(1);
    expect(observation).toMatch(/^Error: the MCP server "shop" answered with an error: .*URL elicitation required/i);
    expect(calls).toBe(2);
  });

  it('refuses hostile URL lists without asking anyone', async () => {
    const cases: [unknown[], string][] = [
      [[{ ...PAY, url: 'javascript:alert(1)' }], 'only http and https URLs are opened'],
      [[{ ...PAY, url: 'https://bank.example@evil.example/' }], 'has a user name or password'],
      [Array.from({ length: MAX_REQUIRED_URLS + 1 }, (_, i) => ({ ...PAY, elicitationId: `p${i}` })), 'at most 5'],
      [[{ mode: 'url', url: 42 }], 'without a url, elicitationId and message'],
    ];
    for (const [urls, why] of cases) {
      required = urls;
      calls = 0;
      const { asked, observation } = await pay('accept');
      expect(asked).toEqual([]);
      expect(observation).toContain(why);
      expect(calls).toBe(1);
    }
  });
});
