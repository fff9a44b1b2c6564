import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalSandboxProvider } from '../../src/sandbox/localProvider.js';
import type { SandboxProvider } from '../../src/shell/sandboxPort.js';
import { type ToolSession, toolSession } from '../../src/testing/toolSession.js';
import { openInside } from '../../src/tools/confinedFile.js';
import { createStrReplaceEditor } from '../../src/tools/strReplaceEditor.js';
import { tempWorkspace } from '../toolHelpers.js';

// A prompt-injected model, or code it ran, plants links, pipes and odd bytes in the workspace:
// the editor must stay inside it, never hang, and leave the bytes it does not edit as they were.

let ws: string;
let outside: string;
let session: ToolSession;
const edit = (args: Record<string, unknown>) => session.call(args);

beforeEach(async () => {
  ws = await tempWorkspace();
  outside = await tempWorkspace();
  session = toolSession(createStrReplaceEditor({ workspace: ws }));
});
afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('confinement holds for the operation, not only for a check before it', () => {
  it('does not write through a dangling symlink, for a file or a directory', async () => {
    await symlink(join(outside, 'x.sh'), join(ws, 'notes.md'));
    const created = await edit({ command: 'create', path: join(ws, 'notes.md'), file_text: 'echo pwned\n' });
    expect(created.isError).toBe(true);
    await symlink(join(outside, 'gone'), join(ws, 'sub'));
    const nested = await edit({ command: 'create', path: join(ws, 'sub', 'a.txt'), file_text: 'x' });
    expect(nested.isError).toBe(true);
    for (const command of ['view', 'str_replace', 'insert', 'undo_edit']) {
      const result = await edit({ command, path: join(ws, 'notes.md'), old_str: 'a', new_str: 'b', insert_line: 0 });
      expect(result.isError).toBe(true);
    }
    expect(await readdir(outside)).toEqual([]);
  });

  it('still follows a symlink that stays inside the workspace', async () => {
    await mkdir(join(ws, 'real'));
    await writeFile(join(ws, 'real', 'a.txt'), 'one\n');
    await symlink(join(ws, 'real'), join(ws, 'alias'));
    await symlink(join(ws, 'real', 'a.txt'), join(ws, 'a-link.txt'));
    expect((await edit({ command: 'view', path: join(ws, 'a-link.txt') })).output).toContain('     1\tone');
    expect(
      (await edit({ command: 'str_replace', path: join(ws, 'alias', 'a.txt'), old_str: 'one', new_str: 'two' }))
        .isError,
    ).toBe(false);
    expect((await edit({ command: 'create', path: join(ws, 'alias', 'b.txt'), file_text: 'b' })).isError).toBe(false);
    expect(await readFile(join(ws, 'real', 'a.txt'), 'utf8')).toBe('two\n');
    expect(await readFile(join(ws, 'real', 'b.txt'), 'utf8')).toBe('b');
  });

  it('never writes a byte outside while a directory and a file are swapped for symlinks out, in a race', async () => {
    await writeFile(join(outside, 'f.txt'), 'OUTSIDE F\n');
    await writeFile(join(outside, 'g.txt'), 'OUTSIDE G\n');
    await mkdir(join(ws, 'dir'));
    await writeFile(join(ws, 'dir', 'f.txt'), 'alpha\n');
    await writeFile(join(ws, 'g.txt'), 'gamma\n');
    await symlink(outside, join(ws, 'dir.link'));
    await symlink(join(outside, 'g.txt'), join(ws, 'g.link'));
    // Another process exchanges ws/dir with a link to `outside`, and ws/g.txt with a link to
    // outside/g.txt, atomically (renameat2 RENAME_EXCHANGE) and back, as fast as it can, until
    // it is told to stop (its stdin closes) or has swapped enough.
    const swapper = spawn(
      'python3',
      [
        '-c',
        `
import ctypes, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
def exchange(a, b):
    if libc.renameat2(-100, a.encode(), -100, b.encode(), 2) != 0:
        raise OSError(ctypes.get_errno(), 'renameat2 ' + a)
ws = sys.argv[1]
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
print('ready', flush=True)
n = 0
while not stop.is_set() and n < 5_000_000:
    exchange(ws + '/dir', ws + '/dir.link')
    exchange(ws + '/g.txt', ws + '/g.link')
    n += 1
`,
        ws,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    await once(swapper.stdout, 'data');
    const exited = once(swapper, 'exit');
    let edited = 0;
    const count = async (args: Record<string, unknown>) => {
      const { output } = await edit(args);
      if (output.startsWith('The file') || output.startsWith('File created')) edited++;
    };
    try {
      for (let i = 0; i < 400; i++) {
        const f = join(ws, 'dir', 'f.txt');
        const g = join(ws, 'g.txt');
        await count({
          command: 'str_replace',
          path: f,
          old_str: i % 2 ? 'beta' : 'alpha',
          new_str: i % 2 ? 'alpha' : 'beta',
        });
        await count({ command: 'create', path: join(ws, 'dir', `new-${i}.txt`), file_text: `created ${i}\n` });
        await count({ command: 'insert', path: g, insert_line: 0, new_str: `line ${i}` });
        await count({ command: 'view', path: g });
        await count({ command: 'undo_edit', path: g });
        await count({ command: 'undo_edit', path: f });
      }
    } finally {
      swapper.stdin.end();
      await exited;
    }
    // The race was run: some edits got through, inside.
    expect(edited).toBeGreaterThan(0);
    expect((await readdir(outside)).sort()).toEqual(['f.txt', 'g.txt']);
    expect(await readFile(join(outside, 'f.txt'), 'utf8')).toBe('OUTSIDE F\n');
    expect(await readFile(join(outside, 'g.txt'), 'utf8')).toBe('OUTSIDE G\n');
  });
});

/** Opens the pipe for writing and closes it: a reader blocked on it (the bug) gets its end of file. */
async function release(fifo: string) {
  try {
    await (await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).close();
  } catch {
    // ENXIO: nobody is reading it, as it should be.
  }
}

describe('non-regular files are refused, never waited on', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('refuses a FIFO and a socket for every command, and marks them in a listing', async () => {
    const fifo = join(ws, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const sock = join(ws, 'sock');
    server = createServer();
    server.listen(sock);
    await once(server, 'listening');
    // A guard against the bug hanging the suite, not a timing assertion: the refusal is immediate.
    const hung = new Promise<{ output: string }>((resolve) => {
      setTimeout(() => resolve({ output: 'hung' }), 10_000).unref();
    });
    try {
      for (const path of [fifo, sock]) {
        for (const command of ['view', 'str_replace', 'insert']) {
          const result = await Promise.race([
            edit({ command, path, old_str: 'a', new_str: 'b', insert_line: 0 }),
            hung,
          ]);
          expect(result.output).toMatch(/is not a regular file/);
        }
      }
    } finally {
      await release(fifo);
    }
    const listing = (await edit({ command: 'view', path: ws })).output;
    expect(listing).toContain(`${fifo} [named pipe]`);
    expect(listing).toContain(`${sock} [socket]`);
  });
});

describe('bytes an edit does not touch stay as they were', () => {
  const makefile = 'all: build\n\nbuild:\n\tcc -o app main.c\n\t@echo built\n\nclean:\n\trm -f app\n';

  it('keeps the tabs of a Makefile through str_replace, insert and undo', async () => {
    const path = join(ws, 'Makefile');
    await writeFile(path, makefile);
    await edit({ command: 'str_replace', path, old_str: 'all: build', new_str: 'all: build test' });
    expect(await readFile(path, 'utf8')).toBe(makefile.replace('all: build', 'all: build test'));
    await edit({ command: 'insert', path, insert_line: 8, new_str: 'test:\n\t./app --check' });
    expect(await readFile(path, 'utf8')).toBe(
      `${makefile.replace('all: build', 'all: build test')}test:\n\t./app --check\n`,
    );
    // An old_str copied from the view (tabs shown as spaces) still matches; only its span changes.
    const view = (await edit({ command: 'view', path })).output;
    expect(view).toContain('     4\t        cc -o app main.c');
    const copied = await edit({ command: 'str_replace', path, old_str: '        rm -f app', new_str: '\trm -rf app' });
    expect(copied.isError).toBe(false);
    expect(await readFile(path, 'utf8')).toBe(
      `${makefile.replace('all: build', 'all: build test').replace('rm -f app', 'rm -rf app')}test:\n\t./app --check\n`,
    );
    await edit({ command: 'undo_edit', path });
    await edit({ command: 'undo_edit', path });
    await edit({ command: 'undo_edit', path });
    expect(await readFile(path, 'utf8')).toBe(makefile);
  });

  it('keeps a byte-order mark and CRLF line ends', async () => {
    const path = join(ws, 'win.txt');
    const original = Buffer.from('\uFEFFone\r\ntwo\r\n', 'utf8');
    await writeFile(path, original);
    await edit({ command: 'str_replace', path, old_str: 'two', new_str: 'TWO' });
    expect(await readFile(path)).toEqual(Buffer.from('\uFEFFone\r\nTWO\r\n', 'utf8'));
  });

  it('refuses to edit a Latin-1 or NUL-bearing file and leaves it byte-identical; view says it is binary', async () => {
    const latin = join(ws, 'latin1.txt');
    const latinBytes = Buffer.from('caf\xe9 = 1\nna\xefve = 2\n', 'latin1');
    const nul = join(ws, 'data.bin');
    const nulBytes = Buffer.from('abc\0def\n');
    await writeFile(latin, latinBytes);
    await writeFile(nul, nulBytes);
    for (const [path, bytes, once] of [
      [latin, latinBytes, '= 1'],
      [nul, nulBytes, 'def'],
    ] as const) {
      // `once` occurs once in the file: today's code would replace it, and re-encode the rest.
      const replaced = await edit({ command: 'str_replace', path, old_str: once, new_str: '= 2' });
      expect(replaced).toEqual({
        output: `Error: The file ${path} is binary (not UTF-8 text, or it has NUL bytes); this editor does not edit it. Use python_execute to change it.`,
        isError: true,
      });
      expect((await edit({ command: 'insert', path, insert_line: 0, new_str: 'x' })).output).toMatch(
        /is binary .*python_execute/,
      );
      expect((await edit({ command: 'view', path })).output).toBe(
        `The file ${path} is binary (not UTF-8 text, or it has NUL bytes), ${bytes.length} bytes; it is not shown. Inspect it with python_execute.`,
      );
      expect(await readFile(path)).toEqual(bytes);
    }
  });
});

describe('directory views are clipped', () => {
  it('shows at most the maximum response size of a listing of 3000 files, and says how many were left out', async () => {
    await mkdir(join(ws, 'many'));
    for (let i = 0; i < 3000; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) =>
          writeFile(join(ws, 'many', `file-${String(i + j).padStart(4, '0')}.txt`), ''),
        ),
      );
    }
    const { output, isError } = await edit({ command: 'view', path: ws });
    expect(isError).toBe(false);
    expect(output.length).toBeLessThan(16_500);
    const shown = output.split('\n').filter((line) => line.startsWith(join(ws, 'many', 'file-'))).length;
    expect(shown).toBeGreaterThan(100);
    expect(output).toContain(`<response clipped><NOTE>${3000 - shown} of 3001 entries are not shown.`);
  });
});

describe('without /proc (other systems), the check after the open still refuses what leads out', () => {
  const noProc = { viaProc: false };

  it('refuses a dangling link, a link as the file and a directory that links out, and removes what it created out there', async () => {
    await symlink(join(outside, 'x.sh'), join(ws, 'notes.md'));
    await expect(openInside(ws, join(ws, 'notes.md'), 'create', 'notes.md', noProc)).rejects.toMatchObject({
      code: 'EEXIST',
    });
    await writeFile(join(outside, 'f.txt'), 'OUTSIDE');
    await symlink(join(outside, 'f.txt'), join(ws, 'f.txt'));
    await expect(openInside(ws, join(ws, 'f.txt'), 'write', 'f.txt', noProc)).rejects.toMatchObject({ code: 'ELOOP' });
    // As if ws/d had been a directory when the path was checked, and a link out when opened.
    await symlink(outside, join(ws, 'd'));
    await expect(openInside(ws, join(ws, 'd', 'f.txt'), 'write', 'd/f.txt', noProc)).rejects.toThrow(
      /outside the workspace/,
    );
    await expect(openInside(ws, join(ws, 'd', 'new.txt'), 'create', 'd/new.txt', noProc)).rejects.toThrow(
      /outside the workspace/,
    );
    expect((await readdir(outside)).sort()).toEqual(['f.txt']);
    expect(await readFile(join(outside, 'f.txt'), 'utf8')).toBe('OUTSIDE');
    const handle = await openInside(ws, join(ws, 'sub', 'ok.txt'), 'create', 'sub/ok.txt', noProc);
    await handle.close();
  });
});

describe('opening to append', () => {
  it.each([{ viaProc: true }, { viaProc: false }])(
    'writes at the end, and never through a link (%o)',
    async (options) => {
      await writeFile(join(ws, 'log.txt'), 'one\n');
      const handle = await openInside(ws, join(ws, 'log.txt'), 'append', 'log.txt', options);
      try {
        await handle.writeFile('two\n');
      } finally {
        await handle.close();
      }
      expect(await readFile(join(ws, 'log.txt'), 'utf8')).toBe('one\ntwo\n');
      await writeFile(join(outside, 'f.txt'), 'OUTSIDE');
      await symlink(join(outside, 'f.txt'), join(ws, 'f.txt'));
      await expect(openInside(ws, join(ws, 'f.txt'), 'append', 'f.txt', options)).rejects.toMatchObject({
        code: 'ELOOP',
      });
      expect(await readFile(join(outside, 'f.txt'), 'utf8')).toBe('OUTSIDE');
    },
  );
});

describe('the read itself is bounded: a file that grows after its size was seen is never read whole', () => {
  const LIMIT = 10 * 1024 * 1024;
  const TOO_LARGE = /^Error: The file \S+ is (over 10 MB|\d+\.\d MB), too large for this editor \(limit 10 MB\)/;
  const commands = [
    { command: 'view' },
    { command: 'str_replace', old_str: 'hello', new_str: 'bye' },
    { command: 'insert', insert_line: 0, new_str: 'top' },
  ];

  it('in a sandbox, a file grown between the listing and the read is too large for every command that reads it', async () => {
    const path = join(ws, 'flip.txt');
    const local = createLocalSandboxProvider({ isolation: 'none', workspace: ws });
    // A writer in the sandbox at the worst moment: right after the editor saw the file's size.
    const growing: SandboxProvider = {
      name: 'growing',
      async create(request) {
        const sandbox = await local.create(request);
        return {
          ...sandbox,
          list: async (dir) => {
            const entries = await sandbox.list(dir);
            await writeFile(path, 'x'.repeat(LIMIT + 4096));
            return entries;
          },
        };
      },
    };
    const sandboxed = toolSession(createStrReplaceEditor({ workspace: ws }), { sandbox: growing });
    try {
      for (const args of commands) {
        await writeFile(path, 'hello\n');
        const { output, isError } = await sandboxed.call({ ...args, path });
        expect({ command: args.command, isError, output: output.slice(0, 200) }).toEqual({
          command: args.command,
          isError: true,
          output: expect.stringMatching(TOO_LARGE),
        });
        // Nothing was written from a partial read.
        expect((await readFile(path, 'utf8')).startsWith('xxx')).toBe(true);
      }
    } finally {
      await sandboxed.close();
    }
  });

  it('with a process flipping the file between 6 bytes and 12 MB, no answer ever holds more than the limit', async () => {
    const path = join(ws, 'flip.txt');
    await writeFile(path, 'hello\n');
    // Sparse: growing to 12 MB costs nothing; the first 6 bytes stay "hello\n".
    const flipper = spawn(
      'python3',
      [
        '-c',
        'import os, sys\nf = os.open(sys.argv[1], os.O_RDWR)\nprint("ready", flush=True)\n' +
          'while True:\n    os.ftruncate(f, 6)\n    os.ftruncate(f, 12 * 1024 * 1024)\n',
        path,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = once(flipper, 'exit');
    const sandboxed = toolSession(createStrReplaceEditor({ workspace: ws }), {
      sandbox: createLocalSandboxProvider({ isolation: 'none', workspace: ws }),
    });
    try {
      await once(flipper.stdout, 'data');
      for (let i = 0; i < 15; i++) {
        for (const editor of [session, sandboxed]) {
          const { output } = await editor.call({ command: 'view', path });
          const binary = /is binary \(not UTF-8 text, or it has NUL bytes\), (\d+) bytes/.exec(output);
          const small = output.includes('     1\thello');
          // Three honest answers: the small file, the large one refused, or what a read got while it shrank.
          const honest = small || TOO_LARGE.test(output) || (binary !== null && Number(binary[1]) <= LIMIT);
          expect(honest ? 'honest' : output.slice(0, 300)).toBe('honest');
          expect(output.length).toBeLessThan(20_000);
        }
      }
    } finally {
      flipper.kill('SIGKILL');
      await exited;
      await sandboxed.close();
    }
  });
});
