import { spawn } from 'node:child_process';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processesMatching, type RecordedRequest } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { dist, runNode, scriptedModels, tempDir } from './helpers.js';

const endpoint = scriptedModels();

const done = { content: 'All done.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] };

describe('openmanus', () => {
  it('runs a live task against an OpenAI-compatible endpoint with live progress', async () => {
    const workspace = await tempDir();
    const { server, env } = await endpoint([
      { content: 'Computing.', toolCalls: [{ name: 'python_execute', arguments: { code: 'print(6 * 7)' } }] },
      { content: 'The answer is 42.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const { code, stdout, stderr } = await runNode(
      'cli.js',
      ['--workspace', workspace, '--model', 'gpt-4o', 'What is 6*7?'],
      { env },
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toBe('The answer is 42.\n');
    expect(stderr).toContain('Step 1/20');
    expect(stderr).toContain('→ python_execute(code: "print(6 * 7)")');
    expect(stderr).toContain('← 42');
    // gpt-4o has a price: the summary says what the run cost.
    expect(stderr).toMatch(
      /■ terminated after 2 step\(s\), [\d.]+s, 2 model calls, [\d,]+ in · [\d,]+ out · <?\$[\d.]+$/m,
    );
    expect(stderr).not.toContain('\u001b[');
    expect(server.requests[0]?.model).toBe('gpt-4o');
    expect(String(server.requests[0]?.messages[0]?.content)).toContain(`Your workspace directory is ${workspace}`);
  });

  it('takes the task from --prompt, as OpenManus does', async () => {
    const { server, env } = await endpoint([done]);
    const { code } = await runNode('cli.js', ['--prompt', 'say done', '--workspace', await tempDir()], { env });
    expect(code).toBe(0);
    expect(server.requests[0]?.messages[1]).toEqual({ role: 'user', content: 'say done' });
    const empty = await runNode('cli.js', ['-p', ' '], { env });
    expect(empty.code).toBe(2);
  });

  it('--json prints the run as JSON lines ending with the result', async () => {
    const { env } = await endpoint([done]);
    const { code, stdout } = await runNode('cli.js', ['--json', '--workspace', await tempDir(), 'finish'], { env });
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; result?: { finishReason: string } });
    expect(lines[0]?.type).toBe('event');
    expect(lines.at(-1)).toMatchObject({ type: 'result', result: { finishReason: 'terminated' } });
  });

  it('shows the tokens served from the cache and the cost, in the summary and in --json', async () => {
    const cached = { ...done, usage: { inputTokens: 12_000, outputTokens: 500, cachedInputTokens: 9_000 } };
    const priced = await endpoint([cached]);
    const text = await runNode('cli.js', ['--workspace', await tempDir(), 'finish'], { env: priced.env });
    expect(text.code, text.stderr).toBe(0);
    // The default model, gpt-4o-mini: 3,000 × $0.15 + 9,000 × $0.075 + 500 × $0.60 per million.
    expect(text.stderr).toMatch(
      /■ terminated after 1 step\(s\), [\d.]+s, 1 model calls, 12,000 in \(9,000 cached\) · 500 out · \$0\.0014$/m,
    );

    const json = await runNode('cli.js', ['--json', '--workspace', await tempDir(), 'finish'], {
      env: (await endpoint([cached])).env,
    });
    const result = JSON.parse(json.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(result.result.usage).toEqual({
      inputTokens: 12_000,
      outputTokens: 500,
      llmCalls: 1,
      cachedInputTokens: 9_000,
      costUsd: 0.001425,
    });

    const unpriced = await endpoint([cached]);
    const env = { ...unpriced.env, OPENMANUS_MODEL: 'my-local-model' };
    const unknown = await runNode('cli.js', ['--workspace', await tempDir(), 'finish'], { env });
    expect(unknown.stderr).toMatch(/12,000 in \(9,000 cached\) · 500 out · cost unknown$/m);
  });

  it('reads the task from stdin and refuses an empty one politely', async () => {
    const { env } = await endpoint([done]);
    expect((await runNode('cli.js', ['--workspace', await tempDir()], { env, input: 'finish please\n' })).code).toBe(0);
    const empty = await runNode('cli.js', [], { env, input: '  \n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('openmanus: the task is empty: give one as an argument, or type it at the prompt.\n');
  });

  it('answers a broken config, a missing key and bad options with one clear line', async () => {
    const cwd = await tempDir();
    await mkdir(join(cwd, 'config'));
    await writeFile(
      join(cwd, 'config', 'config.toml'),
      '[llm]\nmodel = "gpt-4o"\napi_key = "k"\nmax_tokens = "many"\n',
    );
    const broken = await runNode('cli.js', ['task'], { cwd });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toBe(
      `openmanus: ${join(cwd, 'config', 'config.toml')}: [llm].max_tokens: Invalid input: expected number, received string\n`,
    );
    await writeFile(join(cwd, 'config', 'config.toml'), '[llm]\nmodel = "gpt-4o"\n');
    expect((await runNode('cli.js', ['task'], { cwd })).stderr).toMatch(
      /\[llm\]\.api_key: is required \(or set OPENAI_API_KEY\)/,
    );
    const nothing = await runNode('cli.js', ['task'], { cwd: await tempDir() });
    expect(nothing.stderr).toMatch(/^openmanus: no LLM is configured/);
    expect((await runNode('cli.js', ['--frobnicate'], {})).stderr).toMatch(/^openmanus: Unknown option '--frobnicate'/);
    expect((await runNode('cli.js', ['--max-steps', 'lots', 'x'], { env: { OPENAI_API_KEY: 'k' } })).stderr).toBe(
      'openmanus: --max-steps must be a positive whole number, got "lots"\n',
    );
  });

  it('names a misspelt key with the one it is nearest to, and says which sections nothing reads', async () => {
    const cwd = await tempDir();
    await mkdir(join(cwd, 'config'));
    await writeFile(join(cwd, 'config', 'config.toml'), '[llm]\nmodle = "gpt-4o"\napi_key = "k"\n');
    const misspelt = await runNode('cli.js', ['task'], { cwd });
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toContain('unknown key `modle`; did you mean `model`?');
    await writeFile(join(cwd, 'config', 'config.toml'), '[llm]\nmodel = "gpt-4o"\n\n[my_tools]\nx = 1\n');
    const { env } = await endpoint([done]);
    const run = await runNode('cli.js', ['--workspace', await tempDir(), 'say done'], { cwd, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('openmanus: [my_tools] is not a section OpenManus reads');
  });

  it('survives a model that calls an unknown tool, python that loops forever and a path outside the workspace', async () => {
    const workspace = await tempDir();
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'planning', arguments: { command: 'create' } }] },
      { toolCalls: [{ name: 'python_execute', arguments: { code: 'while True: pass', timeout: 1 } }] },
      { toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: '/etc/passwd' } }] },
      done,
    ]);
    const { code, stderr } = await runNode('cli.js', ['--workspace', workspace, 'try things'], { env });
    expect(code, stderr).toBe(0);
    const observations = server.requests
      .slice(1)
      .map((r) => r.messages.filter((m) => m.role === 'tool').at(-1)?.content);
    expect(observations[0]).toMatch(
      /^Error: unknown tool 'planning'\. Available tools: python_execute, str_replace_editor, ask_human, terminate, web_search, web_fetch, browser_use\./,
    );
    expect(observations[1]).toMatch(/Execution timed out after 1 seconds; the process and its children were killed\.$/);
    expect(observations[2]).toBe(
      `Error: The path /etc/passwd is outside the workspace ${workspace}; only files inside it can be used.`,
    );
  });

  it('runs python under bubblewrap with --sandbox bwrap', async () => {
    const workspace = await tempDir();
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'python_execute', arguments: { code: 'open("/var/tmp/x", "w")' } }] },
      done,
    ]);
    const { code } = await runNode('cli.js', ['--sandbox', 'bwrap', '--workspace', workspace, 'write outside'], {
      env,
    });
    expect(code).toBe(0);
    expect(server.requests[1]?.messages.at(-2)?.content).toMatch(
      // Where bubblewrap is missing (CI installs it) the call is refused, never run unsandboxed.
      /OSError: \[Errno 30\] Read-only file system: '\/var\/tmp\/x'|could not start bwrap: it is not installed/,
    );
    expect((await runNode('cli.js', ['--sandbox', 'podman', 'x'], { env })).stderr).toBe(
      'openmanus: --sandbox must be "auto", "bwrap", "none", "local", "docker" or "daytona", got "podman"\n',
    );
  });

  it('runs Manus in a local sandbox with --sandbox local: Python, the editor and bash share it', async () => {
    const workspace = await tempDir();
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'python_execute', arguments: { code: 'open("hi.sh", "w").write("echo hi from $0")' } }] },
      { toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: join(workspace, 'hi.sh') } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'bash hi.sh' } }] },
      done,
    ]);
    const { code, stderr } = await runNode('cli.js', ['--sandbox', 'local', '--workspace', workspace, 'say hi'], {
      env,
    });
    expect(code, stderr).toBe(0);
    const tools = server.requests[0]?.tools as { function: { name: string } }[];
    expect(tools.map((t) => t.function.name)).toContain('bash');
    const observations = server.requests
      .at(-1)
      ?.messages.filter((m) => m.role === 'tool')
      .map((m) => m.content);
    expect(observations?.[1]).toContain('     1\techo hi from $0');
    expect(observations?.[2]).toBe('hi from hi.sh\n[exit code 0]');
  });

  it('runs data_analysis in a local sandbox too: its Python works in the sandbox’s workspace', async () => {
    const workspace = await tempDir();
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'python_execute', arguments: { code: 'import os; print(os.getcwd())' } }] },
      done,
    ]);
    const args = ['--sandbox', 'local', '--agent', 'data_analysis', '--workspace', workspace, 'where am I?'];
    const { code, stderr } = await runNode('cli.js', args, { env });
    expect(code, stderr).toBe(0);
    const observation = server.requests.at(-1)?.messages.findLast((m) => m.role === 'tool')?.content;
    expect(observation).toBe(await realpath(workspace));
  });

  it('refuses the browser agent in a sandbox provider', async () => {
    const { env } = await endpoint([]);
    expect((await runNode('cli.js', ['--sandbox', 'local', '--agent', 'browser', 'x'], { env })).stderr).toBe(
      'openmanus: --sandbox local runs Manus, swe or data_analysis in a sandbox: use it with --agent manus|swe|data_analysis (or --sandbox auto|bwrap|none)\n',
    );
  });

  it('answers ask_human without a terminal instead of blocking', async () => {
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which city?' } }] },
      done,
    ]);
    const { code } = await runNode('cli.js', ['--workspace', await tempDir(), 'plan a trip'], { env });
    expect(code).toBe(0);
    expect(server.requests[1]?.messages.at(-2)?.content).toMatch(
      /^\(No one can answer: openmanus is not attached to a terminal/,
    );
  });

  it('on a terminal: asks the person, in colour', async () => {
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which city?' } }] },
      done,
    ]);
    const workspace = await tempDir();
    // `script` gives the CLI a real pseudo-terminal; what we write to it is what the person types.
    const command = `${process.execPath} ${dist('cli.js')} --workspace ${workspace} 'plan a trip'`;
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', ...env } });
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
      if (screen.includes('You: ') && !child.stdin.writableEnded) child.stdin.write('Kyoto\n');
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    child.stdin.end();
    expect(code).toBe(0);
    expect(screen).toContain('Manus asks: Which city?');
    expect(screen).toContain('\u001b[1mStep 1/20\u001b[0m');
    expect(server.requests[1]?.messages.at(-2)?.content).toBe('Kyoto');
  });

  it('stops at the step limit with a non-zero exit and the reason', async () => {
    const looping = (_: RecordedRequest, i: number) => ({
      toolCalls: [{ name: 'python_execute', arguments: { code: `print(${i})` } }],
    });
    const { env } = await endpoint([looping, looping, looping]);
    const { code, stderr } = await runNode('cli.js', ['--max-steps', '2', '--workspace', await tempDir(), 'loop'], {
      env,
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/openmanus: stopped \(max_steps\): reached the step limit \(2\)\n$/);
  });

  it('Ctrl+C cancels cleanly: python is killed, the run says what was done, exit 130', async () => {
    const marker = `cancel-me-${Date.now()}`;
    const { env } = await endpoint([
      {
        toolCalls: [
          { name: 'python_execute', arguments: { code: `import time  # ${marker}\ntime.sleep(30)`, timeout: 50 } },
        ],
      },
    ]);
    const result = await runNode('cli.js', ['--workspace', await tempDir(), 'wait'], {
      env,
      onStart: (child) => {
        child.stderr?.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('→ python_execute')) setTimeout(() => child.kill('SIGINT'), 300);
        });
      },
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('Cancelling… (press Ctrl+C again to force)');
    expect(result.stderr).toMatch(/■ cancelled after 1 step\(s\)/);
    expect(processesMatching(marker)).toEqual([]);
  });
});
