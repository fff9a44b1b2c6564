// A long-lived process in a Daytona sandbox (the shell bash runs in), against the local stand-in
// of the API: the checks every provider's shell passes (spawnContract.ts), made through the
// toolbox's session API — a session per process, deleted when it is killed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDaytonaSandboxProvider } from '../src/daytonaProvider.js';
import type { DaytonaSandbox } from '../src/daytonaSandbox.js';
import { DEFAULT_DAYTONA_SETTINGS } from '../src/daytonaSettings.js';
import { type DaytonaStandIn, startDaytonaStandIn } from './daytonaStandIn.js';
import { spawnContract, terminal } from './spawnContract.js';

let dir: string;
let standIn: DaytonaStandIn;
let sandbox: DaytonaSandbox;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'daytona-spawn-'));
  standIn = await startDaytonaStandIn();
  const provider = createDaytonaSandboxProvider(
    { ...DEFAULT_DAYTONA_SETTINGS, apiKey: 'key-1', serverUrl: standIn.url },
    { workspace: dir },
  );
  sandbox = await provider.create({ runId: 'spawn-test', signal: new AbortController().signal });
});
afterAll(async () => {
  await sandbox?.close();
  await standIn?.close();
  await rm(dir, { recursive: true, force: true });
});

spawnContract(() => sandbox);

describe('a Daytona shell is a session command', () => {
  it('runs in a session of its own, with input sent and output followed, and the session deleted when killed', async () => {
    const before = standIn.sessions(sandbox.id);
    const shell = await sandbox.spawn(['bash'], { cwd: '.' });
    const [session] = standIn.sessions(sandbox.id).filter((id) => !before.includes(id));
    expect(session).toMatch(/^openmanus-[0-9a-f]{24}$/);
    // Input is not echoed back into the output.
    expect(await terminal(shell)('read -r line; echo "[$line]"\nhello')).toBe('[hello]');
    await shell.kill();
    expect(standIn.sessions(sandbox.id)).not.toContain(session);
    const paths = standIn.calls.map((call) => `${call.method} ${call.path.replace(/^\/toolbox\/[^/]+/, '')}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        `POST /process/session/${session}/exec`,
        expect.stringMatching(new RegExp(`^WEBSOCKET /process/session/${session}/command/[^/]+/logs$`)),
        expect.stringMatching(new RegExp(`^POST /process/session/${session}/command/[^/]+/input$`)),
        `DELETE /process/session/${session}`,
      ]),
    );
  });

  it('refuses a variable name the shell could not take', async () => {
    await expect(sandbox.spawn(['bash'], { env: { 'A B': 'x' } })).rejects.toThrow(/"A B" is not a variable name/);
  });

  it('deleting the sandbox ends its shells', async () => {
    const provider = createDaytonaSandboxProvider(
      { ...DEFAULT_DAYTONA_SETTINGS, apiKey: 'key-1', serverUrl: standIn.url },
      { workspace: dir },
    );
    const other = await provider.create({ runId: 'closing', signal: new AbortController().signal });
    const shell = await other.spawn(['bash']);
    const exited = new Promise<number | null>((resolve) => shell.onExit(resolve));
    const pid = await terminal(shell)('setsid sleep 1236 & echo $!');
    await other.close();
    expect(await exited).not.toBe(0);
    expect(
      (await sandbox.exec(['/bin/sh', '-c', `test -e /proc/${pid} && cut -d" " -f3 /proc/${pid}/stat`])).stdout,
    ).not.toMatch(/[RS]/);
  });
});
