// `openmanus --sandbox daytona`: SandboxManus in a Daytona sandbox, the CLI run as a child process
// against a local stand-in of Daytona's API (node:http on 127.0.0.1, running commands for real;
// Daytona's cloud cannot be reached from here), pointed at by `[daytona] daytona_server_url`.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { err, loadConfig, type Sandbox } from '@openmanus/core';
import { processesMatching } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaytonaStandIn, startDaytonaStandIn } from '../../../packages/sandbox/test/daytonaStandIn.js';
import { PNG_WRITER } from '../../../packages/tools/test/pngWriter.js';
import { announcingLinks, sandboxProviderFor } from '../src/sandboxProvider.js';
import { runNode, scriptedModels, tempDir } from './helpers.js';

const endpoint = scriptedModels();
const done = { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] };

let standIn: DaytonaStandIn;
beforeAll(async () => {
  standIn = await startDaytonaStandIn();
});
afterAll(() => standIn?.close());

/** A config.toml for the stand-in; the sandbox's workspace is a directory of this host (the stand-in has no container). */
async function configFor(sandboxWorkspace: string, daytona = `daytona_server_url = "${standIn.url}"`) {
  const dir = await tempDir();
  const file = join(dir, 'config.toml');
  await writeFile(
    file,
    [
      '[llm]',
      'model = "gpt-4o"',
      'vision = true',
      '',
      '[sandbox]',
      `work_dir = "${sandboxWorkspace}"`,
      '',
      '[daytona]',
      'daytona_api_key = "dtn-test-key"',
      daytona,
      '',
    ].join('\n'),
  );
  return { dir, file };
}

const observationsOf = (messages: readonly { role: string; content?: unknown }[] = []) =>
  messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

/** The id of the sandbox the stand-in made last. */
const lastSandbox = () => standIn.calls.findLast((call) => call.path.startsWith('/toolbox/'))?.path.split('/')[2] ?? '';

/** Serves the workspace on a free port of every interface, and says which. */
const SERVE =
  'python3 -u -m http.server 0 --bind 0.0.0.0 > server.log 2>&1 & ' +
  'for i in $(seq 200); do grep -q "port" server.log && break; sleep 0.05; done; grep -o "port [0-9]*" server.log';

describe('openmanus --sandbox daytona', () => {
  it("runs Manus's Python, editor, bash and vision in one Daytona sandbox, prints its links, and deletes it", async () => {
    const box = await tempDir();
    const { dir, file } = await configFor(box);
    const page = '<!doctype html><title>Report</title><img src="chart.png">\n';
    const { server, env } = await endpoint([
      {
        toolCalls: [
          {
            name: 'python_execute',
            arguments: {
              code: `${PNG_WRITER}\nhalf_red("chart.png", 2400, 300)\nopen("notes.txt", "w").write("from python\\n")\nprint("drawn")`,
            },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'str_replace_editor',
            arguments: { command: 'create', path: join(box, 'index.html'), file_text: page },
          },
        ],
      },
      { toolCalls: [{ name: 'bash', arguments: { command: 'ls; cat notes.txt; grep -c chart.png index.html' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: SERVE } }] },
      { toolCalls: [{ name: 'sandbox_vision', arguments: { action: 'see_image', file_path: 'chart.png' } }] },
      done,
    ]);
    const { code, stderr } = await runNode(
      'cli.js',
      ['--sandbox', 'daytona', '--config', file, '--workspace', join(dir, 'host'), 'make a report page'],
      { env, cwd: dir },
    );
    expect(code, stderr).toBe(0);
    const id = lastSandbox();
    // The links SandboxManus announces when its sandbox is made.
    expect(stderr).toContain(
      `daytona sandbox for this run is ready — its desktop (VNC, port 6080): https://6080-${id}.proxy.stand-in · ` +
        `its website (port 8080): https://8080-${id}.proxy.stand-in`,
    );
    const last = server.requests.at(-1);
    const [python, editor, listing, served, vision] = observationsOf(last?.messages);
    expect(python).toBe('drawn');
    expect(editor).toBe(
      `File created successfully at: ${join(box, 'index.html')}\n\n` +
        `[index.html is the workspace's home page: the website shows it at https://8080-${id}.proxy.stand-in]`,
    );
    // bash sees what Python and the editor wrote: one sandbox.
    expect(listing).toBe('chart.png\nindex.html\nnotes.txt\nfrom python\n1\n[exit code 0]');
    const port = /port (\d+)/.exec(served ?? '')?.[1];
    expect(served).toContain(`[Port ${port} now serves: its preview link is https://${port}-${id}.proxy.stand-in]`);
    expect(vision).toMatch(/^chart\.png: a 2400×300 PNG image, attached scaled down to 1920×240, as a JPEG of \d+ KB/);
    // The image reached the model (configured with vision) as a JPEG after the tool results.
    const image = last?.messages
      .flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; image_url?: { url: string } }[]) : []))
      .find((part) => part.type === 'image_url');
    expect(image?.image_url?.url).toMatch(/^data:image\/jpeg;base64,\/9j\//);
    // The model was told the sandbox's workspace; the service was called with the configured key.
    expect(String(server.requests[0]?.messages[0]?.content)).toContain(box);
    expect(standIn.calls.filter((call) => call.path === '/sandbox').map((call) => call.authorization)).toContain(
      'Bearer dtn-test-key',
    );
    expect(await readFile(join(box, 'notes.txt'), 'utf8')).toBe('from python\n');
    // Deleted with everything in it when the run ended.
    expect(standIn.live.has(id)).toBe(false);
    expect(standIn.calls).toContainEqual(expect.objectContaining({ method: 'DELETE', path: `/sandbox/${id}` }));
    expect(processesMatching('http.server 0 --bind 0.0.0.0')).toEqual([]);
  }, 120_000);

  it('deletes the sandbox when the run fails after making it', async () => {
    const box = await tempDir();
    const { dir, file } = await configFor(box);
    const { env } = await endpoint([
      { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 777.125 > /dev/null 2>&1 & echo started' } }] },
      { error: { status: 400, message: 'the model refused' } },
    ]);
    const { code, stderr } = await runNode('cli.js', ['--sandbox', 'daytona', '--config', file, 'fail'], {
      env,
      cwd: dir,
    });
    expect(code, stderr).toBe(1);
    expect(stderr).toContain('the model refused');
    const id = lastSandbox();
    expect(stderr).toContain(`https://6080-${id}.proxy.stand-in`);
    expect(standIn.live.has(id)).toBe(false);
    expect(standIn.calls).toContainEqual(expect.objectContaining({ method: 'DELETE', path: `/sandbox/${id}` }));
    expect(processesMatching('sleep 777.125')).toEqual([]);
  });

  it('deletes the sandbox, and what runs in it, when the run is cancelled (Ctrl+C) in the middle of a command', async () => {
    const { dir, file } = await configFor(await tempDir());
    const { env } = await endpoint([
      { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 31.25; echo late' } }] },
    ]);
    const { code, stderr } = await runNode('cli.js', ['--sandbox', 'daytona', '--config', file, 'wait'], {
      env,
      cwd: dir,
      onStart: (child) => {
        // Ctrl+C once the command runs in the sandbox (its process shows in /proc: the stand-in's sandbox is this host).
        const interruptWhenRunning = () => {
          if (processesMatching('sleep 31.25').length > 0) child.kill('SIGINT');
          else setTimeout(interruptWhenRunning, 20);
        };
        interruptWhenRunning();
      },
    });
    expect(code, stderr).toBe(130);
    const id = lastSandbox();
    expect(standIn.live.has(id)).toBe(false);
    expect(standIn.calls).toContainEqual(expect.objectContaining({ method: 'DELETE', path: `/sandbox/${id}` }));
    expect(processesMatching('sleep 31.25')).toEqual([]);
  });

  it('an unreachable service is a clear observation, not a crash', async () => {
    const gone = await startDaytonaStandIn();
    await gone.close();
    const { dir, file } = await configFor(await tempDir(), `daytona_server_url = "${gone.url}"`);
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo hi' } }] },
      done,
    ]);
    const { code, stderr } = await runNode('cli.js', ['--sandbox', 'daytona', '--config', file, 'hi'], {
      env,
      cwd: dir,
    });
    expect(code, stderr).toBe(0);
    expect(observationsOf(server.requests.at(-1)?.messages)[0]).toMatch(
      /^Error: daytona sandbox: could not make a sandbox at http:\/\/127\.0\.0\.1:\d+: .*(ECONNREFUSED|connect)/,
    );
  });

  it('without [daytona] it is a clear error for --sandbox daytona only; everything else runs', async () => {
    const dir = await tempDir();
    const file = join(dir, 'config.toml');
    await writeFile(file, '[llm]\nmodel = "gpt-4o"\n');
    const { env } = await endpoint([done]);
    const refused = await runNode('cli.js', ['--sandbox', 'daytona', '--config', file, 'hi'], { env, cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^openmanus: --sandbox daytona: .*Daytona is not configured: add a \[daytona\] table/,
    );
    const plain = await runNode('cli.js', ['--sandbox', 'none', '--config', file, 'hi'], { env, cwd: dir });
    expect(plain.code, plain.stderr).toBe(0);
  });
});

describe('sandboxProviderFor daytona', () => {
  const configOf = async (text: string) => {
    const file = join(await tempDir(), 'config.toml');
    await writeFile(file, `[llm]\nmodel = "m"\napi_key = "k"\n${text}`);
    const loaded = loadConfig({ path: file, env: {} });
    if (!loaded.isOk()) throw new Error(loaded.error.message);
    return loaded.value;
  };

  it("tells the model [sandbox]'s work_dir, and names a bad key of either table", async () => {
    const config = await configOf('[sandbox]\nwork_dir = "/home/daytona/work"\n[daytona]\ndaytona_api_key = "k"\n');
    const made = await sandboxProviderFor('daytona', { workspace: '/host', config });
    expect(made.isOk() && made.value.workspace).toBe('/home/daytona/work');
    expect(made.isOk() && made.value.provider.name).toBe('daytona');
    const badDaytona = await sandboxProviderFor('daytona', {
      workspace: '/host',
      config: await configOf('[daytona]\ndaytona_api_key = "k"\ndaytona_server_url = "ftp://x"\n'),
    });
    expect(badDaytona.isOk() ? '' : badDaytona.error).toMatch(/^--sandbox daytona: .*\[daytona\]\.daytona_server_url/);
    const badSandbox = await sandboxProviderFor('daytona', {
      workspace: '/host',
      config: await configOf('[sandbox]\ntimeout = "soon"\n[daytona]\ndaytona_api_key = "k"\n'),
    });
    expect(badSandbox.isOk() ? '' : badSandbox.error).toMatch(/^--sandbox daytona: .*\[sandbox\]\.timeout/);
  });

  it('needs @openmanus/sandbox, and says so', async () => {
    const notFound = async () => {
      throw Object.assign(new Error("Cannot find package '@openmanus/sandbox'"), { code: 'ERR_MODULE_NOT_FOUND' });
    };
    expect(await sandboxProviderFor('daytona', { workspace: '/w', load: notFound })).toEqual(
      err(
        '--sandbox daytona needs the @openmanus/sandbox package, which is not installed (pnpm add @openmanus/sandbox)',
      ),
    );
  });

  it('announces a new sandbox’s links when it has them, says why when it cannot, and nothing for others', async () => {
    const lines: string[] = [];
    const made = (previewUrl?: Sandbox['previewUrl']) =>
      announcingLinks(
        { name: 'x', create: async () => ({ provider: 'x', ...(previewUrl ? { previewUrl } : {}) }) as Sandbox },
        (line) => lines.push(line),
      ).create({ runId: 'r', signal: new AbortController().signal });
    await made(async (port) => ({ url: `https://${port}.example`, token: '' }));
    await made(async () => {
      throw new Error('HTTP 503');
    });
    await made();
    expect(lines).toEqual([
      'x sandbox for this run is ready — its desktop (VNC, port 6080): https://6080.example · its website (port 8080): https://8080.example',
      'x sandbox for this run is ready — its preview links could not be had: HTTP 503',
    ]);
  });
});
