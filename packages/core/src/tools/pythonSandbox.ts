// How python_execute isolates the code it runs: bubblewrap when it works here, else a separate
// uid per call when the host is root, else the host's own user (said once per process).
import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { loadChildProcess as childProcess } from '../lazyModule.js';
import { canSwitchUser } from './sandboxUser.js';

/**
 * `auto` (default): bubblewrap when it works here, else the best the host allows (said once).
 * `bwrap`: bubblewrap or a refusal. `none`: no bubblewrap; a separate uid when running as root.
 */
export type PythonSandbox = 'auto' | 'bwrap' | 'none';

/** What a call actually runs under. */
export type Isolation = 'bwrap' | 'user' | 'same-user';

/**
 * The interpreter's arguments: the code comes on stdin, so no size or byte of it meets the
 * argument limits (E2BIG). Read whole and compiled as `<string>`, it runs as `python3 -c` code
 * would (same `sys.argv`, `sys.path[0]`, `__main__` and traceback lines; the bootstrap's own frame
 * is left out of tracebacks). Not `python3 -u -`: with -u, Python reads a script from stdin one
 * byte per system call (seconds for a few megabytes).
 */
export const PYTHON_ARGS: readonly string[] = [
  '-u',
  '-c',
  'import sys; sys.excepthook = (lambda h: lambda t, v, tb: h(t, v.with_traceback(tb and tb.tb_next), tb and tb.tb_next))(sys.excepthook); del sys; ' +
    "exec(compile(__import__('sys').stdin.buffer.read(), '<string>', 'exec', dont_inherit=True))",
];

/** The PATH inside bubblewrap: only system directories exist there. */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

// What Python and common libraries read under /etc; nothing else of /etc is visible (no shadow,
// no pip.conf or npmrc, no ssh keys, no /etc/ssl/private).
const ETC_ENTRIES = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'timezone',
  'passwd',
  'group',
  'nsswitch.conf',
  'host.conf',
  'hosts',
  'gai.conf',
  'ssl/certs',
  'ssl/openssl.cnf',
  'ca-certificates',
  'ca-certificates.conf',
  'pki/tls/certs',
  'pki/ca-trust',
  'alternatives',
  'fonts',
  'mime.types',
  'mailcap',
  'locale.alias',
  'locale.conf',
  'os-release',
  'matplotlibrc',
  'magic',
  'magic.mime',
];

// Configuration under /usr that may hold credentials (npm's global npmrc lives there).
const MASKED = ['/usr/local/etc', '/usr/etc'];

const isDir = (path: string) => {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
};

const underSystemDir = (path: string) => SYSTEM_DIRS.some((dir) => path === dir || path.startsWith(`${dir}/`));

let systemMountsCache: string[] | undefined;
function systemMounts(): string[] {
  if (systemMountsCache) return systemMountsCache;
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    try {
      const stat = lstatSync(dir);
      if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
      else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
    } catch {
      // Not on this system.
    }
  }
  for (const dir of MASKED) if (isDir(dir)) args.push('--tmpfs', dir);
  let etc: string[] = [];
  try {
    etc = readdirSync('/etc').filter((name) => /^python\d/.test(name));
  } catch {
    // No /etc at all.
  }
  for (const entry of [...ETC_ENTRIES, ...etc]) {
    const path = `/etc/${entry}`;
    if (existsSync(path)) args.push('--ro-bind', path, path);
  }
  systemMountsCache = args;
  return args;
}

/**
 * An interpreter named by absolute path outside the system directories (a pyenv or venv python)
 * gets its installation bound read-only: its prefixes, asked of the interpreter itself.
 */
const prefixCache = new Map<string, Promise<string[]>>();
export function interpreterMounts(python: string): Promise<string[]> {
  if (!isAbsolute(python)) return Promise.resolve([]);
  let cached = prefixCache.get(python);
  if (!cached) {
    cached = new Promise<string[]>((resolve) => {
      const script =
        'import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))';
      childProcess().execFile(
        python,
        ['-I', '-S', '-c', script],
        { env: { PATH: SANDBOX_PATH }, timeout: 30_000 },
        (error, out) => {
          const dirs = new Set<string>();
          try {
            dirs.add(dirname(realpathSync(python)));
            dirs.add(dirname(python));
            if (!error) for (const dir of JSON.parse(out) as string[]) dirs.add(realpathSync(dir));
          } catch {
            // Reported when the call runs it.
          }
          const outside = [...dirs].filter((dir) => !underSystemDir(dir));
          // A directory inside another one is bound with it.
          const top = outside.filter((dir) => !outside.some((other) => other !== dir && dir.startsWith(`${other}/`)));
          resolve(top.flatMap((dir) => ['--ro-bind', dir, dir]));
        },
      );
    });
    prefixCache.set(python, cached);
  }
  return cached;
}

let disableUserns: boolean | undefined;
const supportsDisableUserns = () =>
  new Promise<boolean>((resolve) => {
    if (disableUserns !== undefined) return resolve(disableUserns);
    childProcess().execFile(
      'bwrap',
      ['--help'],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeout: 30_000 },
      (_e, out) => {
        const answer = String(out).includes('--disable-userns');
        // Remembered only once bubblewrap answered (a missing one may be installed later).
        if (String(out).includes('--')) disableUserns = answer;
        resolve(answer);
      },
    );
  });

/**
 * The environment of the code: nothing of the host's (no API keys), a home that is not the user's
 * (a private per-call directory, also its TMPDIR; under bubblewrap the sandbox's own /tmp).
 */
export function sandboxEnv(path: string, home: string): Record<string, string> {
  return {
    PATH: path,
    LANG: 'C.UTF-8',
    HOME: home,
    ...(home === '/tmp' ? {} : { TMPDIR: home }),
    PYTHONIOENCODING: 'utf-8',
    PYTHONUNBUFFERED: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    MPLBACKEND: 'Agg',
  };
}

/**
 * The bubblewrap command line: the code (read from stdin) sees the system directories read-only,
 * a few files of /etc, the workspace read-write, a private /tmp, its own /proc and /dev, no
 * network, no host IPC, no capabilities, a fresh session, and dies with its parent.
 */
export function bwrapArgs(
  python: string,
  workspace: string,
  extraMounts: readonly string[] = [],
  options: { readonly disableUserns?: boolean } = {},
): string[] {
  const path = isAbsolute(python) ? `${dirname(python)}:${SANDBOX_PATH}` : SANDBOX_PATH;
  const env = sandboxEnv(path, '/tmp');
  return [
    ...['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'],
    ...(options.disableUserns ? ['--unshare-user', '--disable-userns'] : []),
    '--clearenv',
    ...Object.entries(env).flatMap(([key, value]) => ['--setenv', key, value]),
    ...systemMounts(),
    ...extraMounts,
    ...['--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--dir', '/var/tmp'],
    ...['--bind', workspace, workspace, '--chdir', workspace],
    // The root itself (where bubblewrap made the mount points) is read-only.
    ...['--remount-ro', '/'],
    python,
    ...PYTHON_ARGS,
  ];
}

/** bubblewrap's arguments for a call, with the interpreter's own mounts and the features this bwrap has. */
export async function bwrapCommand(python: string, workspace: string): Promise<[string, string[]]> {
  const [mounts, disable] = await Promise.all([interpreterMounts(python), supportsDisableUserns()]);
  return ['bwrap', bwrapArgs(python, workspace, mounts, { disableUserns: disable })];
}

type Probe = { readonly ok: true } | { readonly ok: false; readonly reason: string };
const probes = new Map<string, Promise<Probe>>();

/** Whether bubblewrap runs `python` here: tried once per interpreter and process, then remembered. */
export function probeBwrap(python: string): Promise<Probe> {
  let probe = probes.get(python);
  if (!probe) {
    probe = (async (): Promise<Probe> => {
      const dir = await mkdtemp(join(tmpdir(), 'openmanus-probe-'));
      try {
        const [command, args] = await bwrapCommand(python, dir);
        return await new Promise<Probe>((resolve) => {
          const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
          const child = childProcess().execFile(
            command,
            args,
            { cwd: dir, env, timeout: 30_000 },
            (error, out, err) => {
              if (!error && out === 'ok\n') return resolve({ ok: true });
              const missing = (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';
              const detail = String(err).trim().split('\n').at(-1) || error?.message || 'no answer';
              resolve({ ok: false, reason: missing ? 'bwrap is not installed' : `bwrap failed: ${detail}` });
            },
          );
          child.stdin?.on('error', () => {});
          child.stdin?.end('print("ok")\n');
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    })();
    probes.set(python, probe);
  }
  return probe;
}

/** What `none` gives: a separate uid when the host is root, else the host's own user. */
export const unsandboxed = (): Isolation => (canSwitchUser() ? 'user' : 'same-user');

let noticeGiven = false;

/** Says once per process that bubblewrap is not used, why, and what holds instead. */
export function noticeOnce(reason: string, isolation: Isolation, onNotice?: (message: string) => void): void {
  if (noticeGiven) return;
  noticeGiven = true;
  const instead =
    isolation === 'user'
      ? 'Python runs as a separate unprivileged user per call instead: it cannot read this process or your ' +
        'private files, but it can read world-readable files and reach the network.'
      : 'Python runs as your own user instead: it can read your files and this process (its environment, ' +
        'API keys included) and reach the network.';
  const message = `python_execute: the bubblewrap sandbox is not available (${reason}). ${instead} Install bubblewrap (apt-get install bubblewrap) for the sandbox.`;
  if (onNotice) onNotice(message);
  else process.emitWarning(message, { code: 'OPENMANUS_NO_SANDBOX' });
}
