// Text from a model, a tool or a server reaches the terminal with its control characters escaped:
// no window title set, no hidden OSC 8 link, no cleared screen. The built CLI runs against a
// scripted model, Python that prints escapes, a hostile MCP server (a real process) and a server
// that fails with escapes on its stderr; our own colours stay.
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Plan } from '@openmanus/flow';
import { afterEach, describe, expect, it } from 'vitest';
import { planView } from '../src/planView.js';
import { createProgress } from '../src/progress.js';
import { terminalText } from '../src/terminalText.js';
import { dist, runNode, scriptedModels, tempDir } from './helpers.js';

const endpoint = scriptedModels();
const made: string[] = [];
/** A workspace of the test's own, removed after it. */
const workspace = async () => {
  const dir = await tempDir();
  made.push(dir);
  return dir;
};
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A window title, a hidden link and a clear screen. */
const ESCAPES = '\u001b]0;pwned title\u0007\u001b]8;;http://evil.example/\u0007click\u001b]8;;\u0007\u001b[2J';
/** The same, as the terminal must show it. */
const SHOWN = '\\x1b]0;pwned title\\x07\\x1b]8;;http://evil.example/\\x07click\\x1b]8;;\\x07\\x1b[2J';
const hostile = fileURLToPath(new URL('../../../packages/mcp/test/fixtures/hostileServer.mjs', import.meta.url));

/** Our own colours: SGR, `ESC [ … m`. */
const COLOURS = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
/** Control characters (ESC, BEL, CSI…) anywhere but in our own colours; not newlines, tabs or a terminal's CR LF. */
const rawControls = (text: string) => text.replace(COLOURS, '').match(/(?![\n\t]|\r\n)\p{Cc}/gu) ?? [];

/** Python that writes the escapes to its stdout. */
const python = {
  name: 'python_execute',
  arguments: {
    // Python reads SHOWN's escapes back into the characters.
    code: `import sys; sys.stdout.write("before${SHOWN}after")`,
  },
};

describe('control characters from models, tools and servers, in the built CLI', () => {
  it('openmanus: Python output, what the model says and its answer are shown escaped, lines kept', async () => {
    const { env } = await endpoint([
      { content: `Running${ESCAPES}`, toolCalls: [python] },
      { content: `Done${ESCAPES}\nsecond line` },
    ]);
    const ran = await runNode('cli.js', ['--sandbox', 'none', '--workspace', await workspace(), 'print it'], { env });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe(`Done${SHOWN}\nsecond line\n`);
    expect(ran.stderr).toContain(`  Running${SHOWN}`);
    expect(ran.stderr).toContain(`← before${SHOWN}after`);
    expect([...rawControls(ran.stdout), ...rawControls(ran.stderr)]).toEqual([]);
  });

  it('on a terminal: our colours stay, the escapes of the tool and the model do not reach it', async () => {
    const { env } = await endpoint([
      { content: `Running${ESCAPES}`, toolCalls: [python] },
      { content: `Done${ESCAPES}` },
    ]);
    // `script` gives the CLI a real pseudo-terminal: `screen` is what it shows.
    const command = `${process.execPath} ${dist('cli.js')} --sandbox none --workspace ${await workspace()} 'print it'`;
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', ...env } });
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString()));
    child.stdin.end();
    expect(await new Promise((resolve) => child.on('close', resolve)), screen).toBe(0);
    expect(screen).toContain('\u001b[1mStep 1/20\u001b[0m');
    expect(screen).toContain(`before${SHOWN}after`);
    expect(screen).toContain(`Done${SHOWN}`);
    expect(rawControls(screen)).toEqual([]);
  });

  it('openmanus mcp against a hostile server: completes, names the tools left out, shows its results escaped', async () => {
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'mcp_server_escapes', arguments: {} }] },
      { content: `Echoed${ESCAPES}` },
    ]);
    const ran = await runNode(
      'cli.js',
      ['mcp', '--server-command', process.execPath, '--server-arg', hostile, '-p', 'Show the escapes'],
      { env },
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain(
      'openmanus mcp: the server\'s tool "deep_schema" is left out: its input schema is nested more than 64 levels deep\n',
    );
    expect(ran.stderr).toContain(
      'openmanus mcp: the server\'s tool "huge_schema" is left out: its input schema is longer than 100,000 characters\n',
    );
    expect(ran.stderr).toContain(`← before${SHOWN}after`);
    expect(ran.stdout).toBe(`Echoed${SHOWN}\n`);
    expect([...rawControls(ran.stdout), ...rawControls(ran.stderr)]).toEqual([]);
    // The model itself gets the tool's text as it is (JSON carries it escaped), marked as the server's.
    expect(server.requests[1]?.messages.find((message) => message.role === 'tool')?.content).toBe(
      `<mcp_content server="server" untrusted="true">\nbefore${ESCAPES}after\n</mcp_content>`,
    );
  });

  it('openmanus mcp: a server that fails with escapes on its stderr is reported with them escaped', async () => {
    const { env } = await endpoint([]);
    const failing = `process.stderr.write(${JSON.stringify(`boom${ESCAPES}`)}); process.exit(1)`;
    const ran = await runNode(
      'cli.js',
      ['mcp', '--server-command', process.execPath, '--server-arg=-e', '--server-arg', failing, '-p', 'x'],
      { env },
    );
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^openmanus mcp: cannot connect to the MCP server /);
    expect(ran.stderr).toContain(`boom${SHOWN}`);
    expect(rawControls(ran.stderr)).toEqual([]);
  });
});

describe('terminalText and the views that print with it', () => {
  it('escapes C0 and C1 controls, DEL, bidi overrides and line separators; keeps newlines and tabs unless oneLine', () => {
    expect(terminalText('a\u001b[2Jb\u0007c\u009bd\u007fe\u202ef\u2028g\r\nh\ti\nj\rk')).toBe(
      'a\\x1b[2Jb\\x07c\\x9bd\\x7fe\\u202ef\\u2028g\nh\ti\nj\\x0dk',
    );
    expect(terminalText('a\nb\tc', { oneLine: true })).toBe('a\\x0ab\\x09c');
    expect(terminalText('plain text, ünïcode, 日本語 and emoji 👍🏽')).toBe(
      'plain text, ünïcode, 日本語 and emoji 👍🏽',
    );
  });

  it('progress lines: a tool’s name, its arguments and result escaped inside our colours', () => {
    const lines: string[] = [];
    const progress = createProgress({ write: (line) => lines.push(line), color: true, now: () => 0 });
    const state = { usage: { inputTokens: 1, outputTokens: 1 } };
    progress({
      type: 'effect',
      effect: { type: 'callTool', call: { id: 'c', name: `x${ESCAPES}`, arguments: '{}' }, args: { text: ESCAPES } },
    } as never);
    progress({ type: 'event', event: { type: 'toolCompleted', output: ESCAPES, isError: true }, state } as never);
    // Arguments are shown as JSON, which writes ESC as \u001b.
    const [call, result] = lines;
    expect(call?.startsWith(`\u001b[36m  → x${SHOWN}\u001b[0m\u001b[2m(text: "\\u001b]0;pwned title\\u0007`)).toBe(
      true,
    );
    expect(call?.endsWith('…)\u001b[0m')).toBe(true);
    expect(result).toBe(`\u001b[31m  ← ${SHOWN}\u001b[0m`);
    expect(lines.flatMap(rawControls)).toEqual([]);
  });

  it('the plan view: title, steps and notes escaped', () => {
    const plan = {
      title: `Trip${ESCAPES}`,
      steps: [{ text: `Book${ESCAPES}`, status: 'blocked', notes: `Sold out${ESCAPES}` }],
    } as unknown as Plan;
    const lines = planView(plan, { color: true });
    expect(lines.map((line) => line.replace(COLOURS, ''))).toEqual([
      `Plan: Trip${SHOWN}`,
      'Progress: 0/1 steps completed (0%), 1 blocked',
      `  0. [!] Book${SHOWN}`,
      `         notes: Sold out${SHOWN}`,
    ]);
    expect(lines.flatMap(rawControls)).toEqual([]);
  });
});
