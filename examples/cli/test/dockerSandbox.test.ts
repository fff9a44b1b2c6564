// `openmanus --sandbox docker`: Manus works entirely inside one container per run, against the
// real Docker daemon and the offline test image (scripts/docker.sh starts and builds them).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { docker, dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from '../../../packages/sandbox/test/docker.js';
import { runNode, scriptedModels, tempDir } from './helpers.js';

const endpoint = scriptedModels();
const done = { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] };

beforeAll(() => dockerReady(), SETUP_TIMEOUT);

describe('openmanus --sandbox docker', () => {
  it("runs Manus's Python, editor and bash in one container, its workspace bound at work_dir, gone after the run", async () => {
    const workspace = await tempDir();
    const cwd = await tempDir();
    await writeFile(
      join(cwd, 'config.toml'),
      `[llm]\nmodel = "gpt-4o"\n\n[sandbox]\nimage = "${TEST_IMAGE}"\nwork_dir = "/workspace"\nmemory_limit = "256m"\n`,
    );
    const { server, env } = await endpoint([
      {
        toolCalls: [
          {
            name: 'python_execute',
            arguments: {
              code: 'import os\nopen("/workspace/hi.sh", "w").write("echo hi from $(hostname)\\n")\nprint(os.path.exists("/.dockerenv"), os.getuid() != 0)',
            },
          },
        ],
      },
      { toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: '/workspace/hi.sh' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'bash /workspace/hi.sh; cat /etc/debian_version' } }] },
      done,
    ]);
    const { code, stderr } = await runNode(
      'cli.js',
      ['--sandbox', 'docker', '--config', join(cwd, 'config.toml'), '--workspace', workspace, 'say hi from the box'],
      { env, cwd },
    );
    expect(code, stderr).toBe(0);
    const observations = server.requests
      .at(-1)
      ?.messages.filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
    // Python ran in the container, not as root; the editor and bash saw what it wrote.
    expect(observations?.[0]).toContain('True True');
    expect(observations?.[1]).toContain('echo hi from $(hostname)');
    expect(observations?.[2]).toMatch(/^hi from [0-9a-f]{12}\n12\.\d+\n/);
    // The model was told the container's workspace, and the host's directory is what was bound there.
    expect(String(server.requests[0]?.messages[0]?.content)).toContain('/workspace');
    expect(await readFile(join(workspace, 'hi.sh'), 'utf8')).toBe('echo hi from $(hostname)\n');
    // The run's container is removed with the run.
    const left = await docker.listContainers({ all: true, filters: { label: ['openmanus.sandbox=1'] } });
    expect(left.filter((c) => c.Mounts.some((m) => m.Source === workspace))).toEqual([]);
  }, 120_000);

  it('runs the swe agent there too: its editor and shell in one container', async () => {
    const workspace = await tempDir();
    const cwd = await tempDir();
    await writeFile(join(cwd, 'config.toml'), `[llm]\nmodel = "gpt-4o"\n\n[sandbox]\nimage = "${TEST_IMAGE}"\n`);
    const { server, env } = await endpoint([
      {
        toolCalls: [
          {
            name: 'str_replace_editor',
            arguments: { command: 'create', path: '/workspace/fix.py', file_text: 'print(6 * 7)\n' },
          },
        ],
      },
      {
        toolCalls: [
          { name: 'bash', arguments: { command: 'python3 /workspace/fix.py && test -f /.dockerenv && echo boxed' } },
        ],
      },
      done,
    ]);
    const { code, stderr } = await runNode(
      'cli.js',
      [
        '--agent',
        'swe',
        '--sandbox',
        'docker',
        '--config',
        join(cwd, 'config.toml'),
        '--workspace',
        workspace,
        'fix it',
      ],
      { env, cwd },
    );
    expect(code, stderr).toBe(0);
    const observations = server.requests
      .at(-1)
      ?.messages.filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
    expect(observations?.[1]).toMatch(/^42\nboxed\n/);
    expect(await readFile(join(workspace, 'fix.py'), 'utf8')).toBe('print(6 * 7)\n');
  }, 120_000);
});
