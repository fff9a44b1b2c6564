// config/mcp.json as OpenManus and other MCP hosts write it, and the errors for a file that is wrong.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeConfigError, ok } from '@openmanus/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../src/client/config.js';
import { createMcpClient } from '../src/client/mcpClient.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'openmanus-mcp-config-'));
  await mkdir(join(dir, 'config'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const write = (text: string, name = 'config/mcp.json') => writeFile(join(dir, name), text);
const failure = (path?: string) => {
  const loaded = loadMcpConfig(path, { cwd: dir });
  if (loaded.isOk()) throw new Error('expected an error');
  return describeConfigError(loaded.error);
};

describe('loadMcpConfig', () => {
  it('reads stdio, SSE and streamable HTTP servers, and skips disabled ones and keys of other hosts', async () => {
    await write(
      JSON.stringify({
        mcpServers: {
          files: {
            command: 'npx',
            args: ['-y', 'server-filesystem', '/tmp'],
            env: { LOG: '1' },
            cwd: '/tmp',
            autoApprove: [],
          },
          legacy: { type: 'sse', url: 'http://127.0.0.1:8000/sse' },
          remote: { type: 'http', url: 'https://example.com/mcp', headers: { authorization: 'Bearer x' } },
          either: { url: 'http://127.0.0.1:9000/mcp' },
          off: { command: 'server', disabled: true },
        },
      }),
    );
    expect(loadMcpConfig(undefined, { cwd: dir })).toEqual(
      ok({
        files: { command: 'npx', args: ['-y', 'server-filesystem', '/tmp'], env: { LOG: '1' }, cwd: '/tmp' },
        legacy: { type: 'sse', url: 'http://127.0.0.1:8000/sse' },
        remote: { type: 'http', url: 'https://example.com/mcp', headers: { authorization: 'Bearer x' } },
        either: { url: 'http://127.0.0.1:9000/mcp' },
      }),
    );
  });

  it('without the default file there are no servers; a file asked for must exist', () => {
    expect(loadMcpConfig(undefined, { cwd: dir })).toEqual(ok({}));
    expect(failure('elsewhere.json')).toBe(`${join(dir, 'elsewhere.json')}: the file does not exist`);
  });

  it('names the file for a file that is not JSON', async () => {
    await write('{ "mcpServers": { ');
    expect(failure()).toMatch(new RegExp(`^${join(dir, 'config/mcp.json')}: not valid JSON: `));
  });

  it('names the file and the key of a mistake', async () => {
    const file = join(dir, 'config/mcp.json');
    const cases: [unknown, string][] = [
      [{}, 'mcpServers: is required: the servers by id'],
      [{ mcpServers: [] }, 'mcpServers: must be an object of servers by id'],
      [
        { mcpServers: { files: { args: ['x'] } } },
        'mcpServers.files.command: is required: a command to run (a stdio server) or a url (an HTTP or SSE server)',
      ],
      [
        { mcpServers: { files: { type: 'stdio' } } },
        'mcpServers.files.command: is required for a stdio server (the program to run)',
      ],
      [{ mcpServers: { web: { type: 'sse' } } }, 'mcpServers.web.url: is required for a server of type "sse"'],
      [
        { mcpServers: { web: { url: 'file:///etc/passwd' } } },
        'mcpServers.web.url: must be an http:// or https:// URL',
      ],
      [
        { mcpServers: { web: { type: 'websocket', url: 'ws://x' } } },
        'mcpServers.web.type: Invalid option: expected one of "stdio"|"http"|"streamable-http"|"streamableHttp"|"sse"',
      ],
      [
        { mcpServers: { files: { command: 'x', args: 'a b' } } },
        'mcpServers.files.args: Invalid input: expected array, received string',
      ],
      [
        { mcpServers: { files: { command: 'x', env: { PORT: 80 } } } },
        'mcpServers.files.env.PORT: Invalid input: expected string, received number',
      ],
      [
        { mcpServers: { both: { command: 'x', url: 'http://h/mcp' } } },
        'mcpServers.both.type: is required when both command and url are given',
      ],
    ];
    for (const [content, message] of cases) {
      await write(JSON.stringify(content));
      expect(failure()).toBe(`${file}: ${message}`);
    }
  });
});

describe('createMcpClient', () => {
  it('refuses servers given in code with the key of the mistake', () => {
    expect(() => createMcpClient({ servers: { web: { url: 'ftp://example.com' } } })).toThrow(
      'servers.web.url: must be an http:// or https:// URL',
    );
  });
});
