// Without bubblewrap: a file of its own, so that the sandbox is first probed here with bubblewrap
// out of reach (the answer is remembered for the rest of the process).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { toolSession } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBash } from '../src/bash/bashTool.js';
import { tempWorkspace } from './helpers.js';

let workspace: string;
const path = process.env.PATH;
beforeAll(async () => {
  workspace = await tempWorkspace();
  process.env.PATH = '/nonexistent';
});
afterAll(() => {
  process.env.PATH = path;
});

describe('bash where bubblewrap cannot run', () => {
  it('by default: runs unsandboxed (as root: as a separate unprivileged uid), and says so once per process, plainly', async () => {
    const notices: string[] = [];
    const onNotice = (message: string) => notices.push(message);
    const first = toolSession(createBash({ workspace, onNotice }));
    const second = toolSession(createBash({ workspace, onNotice }));
    try {
      expect(await first.call({ command: 'echo "running in $PWD"' })).toEqual({
        output: `running in ${workspace}\n[exit code 0]`,
        isError: false,
      });
      const uid = (await second.call({ command: 'echo $EUID' })).output.split('\n')[0];
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(/^bash: the bubblewrap sandbox is not available \(bwrap is not installed\)\./);
      if (process.getuid?.() === 0) {
        // Never host root: a uid of the per-call range.
        expect(Number(uid)).toBeGreaterThanOrEqual(1_800_000_000);
        expect(notices[0]).toMatch(/runs as a separate unprivileged user/);
      } else {
        expect(uid).toBe(String(process.getuid?.()));
        expect(notices[0]).toMatch(/as your own user .* API keys included/);
      }
      expect(notices[0]).toMatch(/Install bubblewrap/);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("with sandbox: 'bwrap': refuses, and runs nothing", async () => {
    const session = toolSession(createBash({ workspace, sandbox: 'bwrap' }));
    try {
      const result = await session.call({ command: 'echo ran > ran.txt' });
      expect(result).toEqual({
        output:
          'Error: bash: the bubblewrap sandbox was asked for but cannot run here (bwrap is not installed), so nothing was run. Install bubblewrap (apt-get install bubblewrap), or give the tool `sandbox: "none"`.',
        isError: true,
      });
      expect(existsSync(join(workspace, 'ran.txt'))).toBe(false);
    } finally {
      await session.close();
    }
  });
});
