// SandboxManus on a Daytona sandbox (the local stand-in of Daytona's API: node:http on 127.0.0.1
// running commands for real): its shell is a session of the sandbox, and the observations name
// the sandbox's preview links — the website's when the editor writes the workspace's index.html, a
// port's when a command starts serving on it. Sandboxes without links (local) are left as they were.
import { join } from 'node:path';
import { createLocalSandboxProvider, createOpenAiLlm, run, type SandboxProvider } from '@openmanus/core';
import { processesMatching, startOpenAiServer } from '@openmanus/core/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDaytonaSandboxProvider } from '../../sandbox/src/daytonaProvider.js';
import { DEFAULT_DAYTONA_SETTINGS } from '../../sandbox/src/daytonaSettings.js';
import { type DaytonaStandIn, startDaytonaStandIn } from '../../sandbox/test/daytonaStandIn.js';
import { createSandboxManus } from '../src/agents/sandboxManus.js';
import { listeningPorts } from '../src/sandbox/previewLinks.js';
import { tempWorkspace } from './helpers.js';

let standIn: DaytonaStandIn;
beforeAll(async () => {
  standIn = await startDaytonaStandIn();
});
afterAll(() => standIn?.close());

const llmOf = (baseURL: string) => createOpenAiLlm({ model: 'gpt-4o', apiKey: 'sk-test', baseURL, maxRetries: 0 });
const observations = (messages: readonly { role: string; content?: unknown }[]) =>
  messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

/** A bash command that serves the workspace on a free port of every interface and says which. */
const SERVE =
  'python3 -u -m http.server 0 --bind 0.0.0.0 > server.log 2>&1 & ' +
  'for i in $(seq 200); do grep -q "port" server.log && break; sleep 0.05; done; grep -o "port [0-9]*" server.log';

describe('SandboxManus on Daytona', () => {
  it('names the website link for index.html and a new port’s link, in a sandbox deleted after the run', async () => {
    const workspace = await tempWorkspace();
    const provider = createDaytonaSandboxProvider(
      { ...DEFAULT_DAYTONA_SETTINGS, apiKey: 'key', serverUrl: standIn.url },
      { workspace },
    );
    const agent = createSandboxManus({ sandbox: provider, workspace });
    expect(agent.config.tools.map((tool) => tool.name)).toContain('sandbox_vision');
    const page = '<!doctype html><title>hi</title><h1>hello</h1>\n';
    const server = await startOpenAiServer({
      script: [
        {
          toolCalls: [
            {
              name: 'str_replace_editor',
              arguments: { command: 'create', path: join(workspace, 'index.html'), file_text: page },
            },
          ],
        },
        {
          toolCalls: [
            {
              name: 'str_replace_editor',
              arguments: { command: 'create', path: join(workspace, 'docs', 'index.html'), file_text: page },
            },
          ],
        },
        { toolCalls: [{ name: 'bash', arguments: { command: SERVE } }] },
        { toolCalls: [{ name: 'bash', arguments: { command: 'echo still serving' } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    try {
      const outcome = await run(agent, 'Make a page and serve it', { llm: llmOf(server.baseURL) });
      expect(outcome.finishReason).toBe('terminated');
      const [made] = standIn.created.slice(-1);
      expect(made).toBeDefined();
      const sandboxId = standIn.calls.find((call) => call.path.startsWith('/toolbox/'))?.path.split('/')[2] ?? '';
      const [root, nested, served, again] = observations(server.requests.at(-1)?.messages ?? []);
      expect(root).toBe(
        `File created successfully at: ${join(workspace, 'index.html')}\n\n` +
          `[index.html is the workspace's home page: the website shows it at https://8080-${sandboxId}.proxy.stand-in]`,
      );
      expect(nested).toBe(`File created successfully at: ${join(workspace, 'docs', 'index.html')}`);
      const port = /port (\d+)/.exec(served ?? '')?.[1];
      expect(port).toBeDefined();
      expect(served).toContain(
        `[Port ${port} now serves: its preview link is https://${port}-${sandboxId}.proxy.stand-in]`,
      );
      expect(again).toBe('still serving\n[exit code 0]');
      // The shell ran in a session of the sandbox; the sandbox, and the server in it, are gone.
      expect(standIn.calls.some((call) => /\/process\/session\/openmanus-[0-9a-f]+\/exec$/.test(call.path))).toBe(true);
      expect(standIn.live.has(sandboxId)).toBe(false);
      expect(processesMatching('http.server 0 --bind 0.0.0.0')).toEqual([]);
      server.assertConsumed();
    } finally {
      await server.close();
    }
  }, 60_000);

  it('adds nothing, and runs nothing more, where the sandbox has no preview links', async () => {
    const workspace = await tempWorkspace();
    const local = createLocalSandboxProvider({ workspace, isolation: 'none' });
    const commands: string[] = [];
    const provider: SandboxProvider = {
      name: 'local',
      create: async (request) => {
        const sandbox = await local.create(request);
        return {
          ...sandbox,
          exec: (command, options) => {
            commands.push(command.join(' '));
            return sandbox.exec(command, options);
          },
        };
      },
    };
    const server = await startOpenAiServer({
      script: [
        {
          toolCalls: [
            {
              name: 'str_replace_editor',
              arguments: { command: 'create', path: join(workspace, 'index.html'), file_text: '<h1>hi</h1>\n' },
            },
          ],
        },
        { toolCalls: [{ name: 'bash', arguments: { command: 'echo hi' } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    try {
      await run(createSandboxManus({ sandbox: provider, workspace }), 'page', { llm: llmOf(server.baseURL) });
      expect(observations(server.requests.at(-1)?.messages ?? [])).toEqual([
        `File created successfully at: ${join(workspace, 'index.html')}`,
        'hi\n[exit code 0]',
      ]);
      expect(commands).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('listeningPorts', () => {
  it('reads the listening sockets reachable from other machines from /proc/net/tcp and tcp6', () => {
    const tables = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1',
      '   1: 0100007F:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 2 1',
      '   2: 0A00020F:1770 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 3 1',
      '   3: 0A00020F:D431 5DB8D822:01BB 01 00000000:00000000 00:00000000 00000000  1000        0 4 1',
      '  sl  local_address                         remote_address                        st tx_queue',
      '   0: 00000000000000000000000000000000:1A0A 00000000000000000000000000000000:0000 0A 00000000:00000000',
      '   1: 00000000000000000000000001000000:0BB9 00000000000000000000000000000000:0000 0A 00000000:00000000',
      '   2: 0000000000000000FFFF00000100007F:0BBA 00000000000000000000000000000000:0000 0A 00000000:00000000',
    ].join('\n');
    // 8080 and 6000 (IPv4, any and one interface), 6666 (IPv6 any); not loopback, not a connection.
    expect([...listeningPorts(tables)].sort((a, b) => a - b)).toEqual([6000, 6666, 8080]);
  });

  it('reports a listening IPv4 socket unless it is on a loopback address (127.x.x.x)', () => {
    const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
    fc.assert(
      fc.property(fc.ipV4(), fc.integer({ min: 1, max: 65535 }), fc.boolean(), (ip, port, listening) => {
        // The kernel writes the address as one little-endian word.
        const word = hex(
          ip.split('.').reduce((sum, octet, i) => sum + Number(octet) * 256 ** i, 0),
          8,
        );
        const line = `   0: ${word}:${hex(port, 4)} 00000000:0000 ${listening ? '0A' : '01'} 00000000:00000000 00:00000000`;
        const expected = listening && !ip.startsWith('127.') ? [port] : [];
        expect([...listeningPorts(line)]).toEqual(expected);
      }),
    );
  });
});
