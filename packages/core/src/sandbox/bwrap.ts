// The bubblewrap sandbox the tools that run programs share (python_execute, bash): the command
// line that runs any program in it, whether it works here, and the environment a program gets.
import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { loadChildProcess as childProcess } from '../lazyModule.js';

/**
 * How a tool that runs programs isolates them. `auto` (default): bubblewrap when it works here,
 * else the best the host allows (said once). `bwrap`: bubblewrap or a refusal. `none`: no bubblewrap.
 */
export type SandboxMode = 'auto' | 'bwrap' | 'none';

/** The PATH inside bubblewrap: only system directories exist there. */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

// What programs (Python, bash, common libraries) read under /etc; nothing else of /etc is visible (no shadow,
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

/** Whether `path` lies in the system directories, which every sandbox sees read-only. */
export const underSystemDir = (path: string) => SYSTEM_DIRS.some((dir) => path === dir || path.startsWith(`${dir}/`));

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
 * The environment of a sandboxed program: nothing of the host's (no API keys), a home that is not
 * the user's (a private directory, also its TMPDIR; under bubblewrap the sandbox's own /tmp).
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

/** The host's PATH without relative entries: those would find programs in the workspace, where the code can put them. */
export const hostPath = (): string =>
  (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin')
    .split(':')
    .filter((dir) => dir.startsWith('/'))
    .join(':');

export interface BwrapOptions {
  /** More bubblewrap arguments, among the mounts (the program's own installation, `--info-fd`). */
  readonly extra?: readonly string[];
  readonly disableUserns?: boolean;
  /** Variables besides the sandbox's own. */
  readonly env?: Readonly<Record<string, string>>;
  /** Where the program starts (default: the workspace). */
  readonly cwd?: string;
}

/**
 * The bubblewrap command line that runs `command` (the program and its arguments): it sees the
 * system directories read-only, a few files of /etc, the workspace read-write, a private /tmp, its
 * own /proc and /dev, no network, no host IPC, no capabilities, a scrubbed environment, a fresh
 * session, and dies with its parent. A program named by absolute path has its directory on PATH.
 */
export function bwrapArgs(command: readonly string[], workspace: string, options: BwrapOptions = {}): string[] {
  const program = command[0] ?? '';
  const path = isAbsolute(program) ? `${dirname(program)}:${SANDBOX_PATH}` : SANDBOX_PATH;
  const env = { ...sandboxEnv(path, '/tmp'), ...options.env };
  return [
    ...['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'],
    ...(options.disableUserns ? ['--unshare-user', '--disable-userns'] : []),
    '--clearenv',
    ...Object.entries(env).flatMap(([key, value]) => ['--setenv', key, value]),
    ...systemMounts(),
    ...(options.extra ?? []),
    ...['--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--dir', '/var/tmp'],
    ...['--bind', workspace, workspace, '--chdir', options.cwd ?? workspace],
    // The root itself (where bubblewrap made the mount points) is read-only.
    ...['--remount-ro', '/'],
    ...command,
  ];
}

/** `bwrap` and its arguments for `command`, with the features this bubblewrap has. */
export async function bwrapCommand(
  command: readonly string[],
  workspace: string,
  extra: readonly string[] = [],
  options: Pick<BwrapOptions, 'env' | 'cwd'> = {},
): Promise<[string, string[]]> {
  const disableUserns = await supportsDisableUserns();
  return ['bwrap', bwrapArgs(command, workspace, { ...options, extra, disableUserns })];
}

export type Probe = { readonly ok: true } | { readonly ok: false; readonly reason: string };
const probes = new Map<string, Promise<Probe>>();

/**
 * Whether bubblewrap runs `command` here: it must print `ok` (given `input` on stdin). Tried once
 * per command line and process, then remembered.
 */
export function probeBwrap(command: readonly string[], input = '', extra: readonly string[] = []): Promise<Probe> {
  const key = JSON.stringify([command, input, extra]);
  let probe = probes.get(key);
  if (!probe) {
    probe = (async (): Promise<Probe> => {
      const dir = await mkdtemp(join(tmpdir(), 'openmanus-probe-'));
      try {
        const [program, args] = await bwrapCommand(command, dir, extra);
        return await new Promise<Probe>((resolve) => {
          const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
          const child = childProcess().execFile(
            program,
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
          child.stdin?.end(input);
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    })();
    probes.set(key, probe);
  }
  return probe;
}

const noticed = new Set<string>();

/**
 * Tells the host once per process and `tool` (to `onNotice`, else as a process warning) that its
 * sandbox is not available: `message` says why and what holds instead.
 */
export function noticeOnce(tool: string, message: string, onNotice?: (message: string) => void): void {
  if (noticed.has(tool)) return;
  noticed.add(tool);
  if (onNotice) onNotice(message);
  else process.emitWarning(message, { code: 'OPENMANUS_NO_SANDBOX' });
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
