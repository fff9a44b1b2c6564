// The bubblewrap sandbox the tools that run programs share (python_execute, bash): the command
// line that runs any program in it, whether it works here, and the environment a program gets.
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import type { Writable } from 'node:stream';
import { loadChildProcess as childProcess } from '../lazyModule.js';
import { canSwitchUser, leaseUid } from './reaping.js';
import { sandboxSeccomp } from './seccomp.js';

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
  /**
   * The host uid the program runs as, when this process is host root (see `bwrapAsHostRoot`):
   * bubblewrap makes its mounts as root, then `setpriv` drops to this uid for good.
   */
  readonly uid?: number;
  /** The descriptor bubblewrap reads the seccomp filter from (`sandboxSeccomp`), if any. */
  readonly seccompFd?: number;
}

/**
 * Whether this process is root on the host (uid 0, mapped to uid 0 outside any user namespace).
 * Then a program in bubblewrap's user namespace would be host root too (its uid 0 is the host's,
 * which is all `/proc/sys` asks for), so it runs as a per-call host uid instead.
 */
export function bwrapAsHostRoot(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    return readFileSync('/proc/self/uid_map', 'utf8')
      .split('\n')
      .some((line) => /^\s*0\s+0\s/.test(line));
  } catch {
    return true;
  }
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

/** Why bubblewrap cannot run here as host root, if it cannot. */
export function hostRootRefusal(): string | undefined {
  if (!bwrapAsHostRoot()) return undefined;
  if (!canSwitchUser()) return 'this process is host root and the sandbox uid range is not mapped here';
  if (!SETPRIV) return 'this process is host root and setpriv (util-linux) is not installed';
  return undefined;
}

/** The directories above `path` (not `/`), outermost first. */
const ancestors = (path: string): string[] => {
  const found: string[] = [];
  for (let dir = dirname(path); dir !== '/' && dir !== '.'; dir = dirname(dir)) found.unshift(dir);
  return found;
};

/** Mount points the sandbox makes itself: their modes are bubblewrap's to set. */
const OWN_MOUNTS = new Set(['/tmp', '/proc', '/dev', '/var/tmp']);

/**
 * For a program that is not root inside: every directory above a bind mount made traversable
 * (bubblewrap, run as root, makes the ones it needs 0700), just before that mount.
 */
function withReachableParents(mounts: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < mounts.length; i++) {
    const op = mounts[i] ?? '';
    const dest = mounts[i + 2];
    if ((op === '--bind' || op === '--ro-bind') && dest !== undefined) {
      for (const dir of ancestors(dest))
        if (!underSystemDir(dir) && !OWN_MOUNTS.has(dir)) out.push('--perms', '0755', '--dir', dir);
    }
    out.push(op);
  }
  return out;
}

/**
 * The bubblewrap command line that runs `command` (the program and its arguments): it sees the
 * system directories read-only, a few files of /etc, the workspace read-write, a private /tmp, its
 * own /proc and /dev, no network, no host IPC, no capabilities, a scrubbed environment, a fresh
 * session, and dies with its parent. A program named by absolute path has its directory on PATH.
 * With `uid` (host root), no user namespace: the program runs as that host uid, with no
 * capabilities and no way to gain any (no_new_privs, empty bounding set), /proc/sys read-only.
 */
export function bwrapArgs(command: readonly string[], workspace: string, options: BwrapOptions = {}): string[] {
  const program = command[0] ?? '';
  const path = isAbsolute(program) ? `${dirname(program)}:${SANDBOX_PATH}` : SANDBOX_PATH;
  const env = { ...sandboxEnv(path, '/tmp'), ...options.env };
  const { uid } = options;
  const seccomp = options.seccompFd === undefined ? [] : ['--seccomp', String(options.seccompFd)];
  const common = ['--clearenv', ...Object.entries(env).flatMap(([key, value]) => ['--setenv', key, value]), ...seccomp];
  if (uid === undefined) {
    return [
      ...['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'],
      ...(options.disableUserns ? ['--unshare-user', '--disable-userns'] : []),
      ...common,
      ...systemMounts(),
      ...(options.extra ?? []),
      ...['--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--dir', '/var/tmp'],
      ...['--bind', workspace, workspace, '--chdir', options.cwd ?? workspace],
      // The root itself (where bubblewrap made the mount points) is read-only.
      ...['--remount-ro', '/'],
      ...command,
    ];
  }
  const id = String(uid);
  return [
    // A user namespace would map the program's uid to the host's root: none, every other one.
    ...['--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try'],
    ...['--die-with-parent', '--new-session'],
    // Only what entering the (lent, maybe 0700) workspace and setpriv's drop to the uid need;
    // setpriv empties the bounding set, and changing uid clears the rest.
    ...['--cap-drop', 'ALL', '--cap-add', 'CAP_DAC_READ_SEARCH'],
    ...['--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP'],
    ...common,
    ...withReachableParents([...systemMounts(), ...(options.extra ?? [])]),
    ...['--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys', '--dev', '/dev'],
    ...['--perms', '01777', '--tmpfs', '/dev/shm', '--perms', '01777', '--tmpfs', '/tmp', '--dir', '/var/tmp'],
    ...withReachableParents(['--bind', workspace, workspace]),
    ...['--chdir', options.cwd ?? workspace, '--remount-ro', '/'],
    ...[SETPRIV ?? 'setpriv', '--reuid', id, '--regid', id, '--clear-groups', '--no-new-privs'],
    ...['--inh-caps=-all', '--bounding-set=-all', '--'],
    ...command,
  ];
}

/** How bubblewrap is started: its arguments, and the bytes it reads from `seccompFd` (when asked for one). */
export interface BwrapLaunch {
  readonly program: string;
  readonly args: string[];
  readonly seccomp?: Buffer;
}

/**
 * `bwrap` and its arguments for `command`, with the features this bubblewrap has. With
 * `seccompFd`, the filter that keeps setuid and setgid bits off every file is to be written there.
 */
export async function bwrapLaunch(
  command: readonly string[],
  workspace: string,
  extra: readonly string[] = [],
  options: Pick<BwrapOptions, 'env' | 'cwd' | 'uid' | 'seccompFd'> = {},
): Promise<BwrapLaunch> {
  const disableUserns = options.uid === undefined && (await supportsDisableUserns());
  const seccomp = options.seccompFd === undefined ? undefined : sandboxSeccomp();
  const seccompFd = seccomp ? options.seccompFd : undefined;
  const args = bwrapArgs(command, workspace, { ...options, seccompFd, extra, disableUserns });
  return { program: 'bwrap', args, ...(seccomp ? { seccomp } : {}) };
}

/**
 * `bwrap` and its arguments for `command`, with the features this bubblewrap has. As host root a
 * `uid` to run the program as is required (`leaseUid`, with the workspace lent to it): without one
 * the program would be host root.
 */
export async function bwrapCommand(
  command: readonly string[],
  workspace: string,
  extra: readonly string[] = [],
  options: Pick<BwrapOptions, 'env' | 'cwd' | 'uid'> = {},
): Promise<[string, string[]]> {
  if (options.uid === undefined && bwrapAsHostRoot()) {
    throw new Error('bwrapCommand: this process is host root; pass the uid the program runs as (leaseUid)');
  }
  const { program, args } = await bwrapLaunch(command, workspace, extra, options);
  return [program, args];
}

export type Probe = { readonly ok: true } | { readonly ok: false; readonly reason: string };
const probes = new Map<string, Promise<Probe>>();

/**
 * Whether bubblewrap runs `command` here, as calls run it (seccomp filter, and as host root the
 * drop to a sandbox uid): it must print `ok` (given `input` on stdin). Tried once per command
 * line and process, then remembered.
 */
export function probeBwrap(command: readonly string[], input = '', extra: readonly string[] = []): Promise<Probe> {
  const key = JSON.stringify([command, input, extra]);
  let probe = probes.get(key);
  if (!probe) {
    probe = (async (): Promise<Probe> => {
      const refusal = hostRootRefusal();
      if (refusal) return { ok: false, reason: refusal };
      const lease = bwrapAsHostRoot() ? leaseUid() : undefined;
      const dir = await mkdtemp(join(tmpdir(), 'openmanus-probe-'));
      try {
        if (lease) await chown(dir, lease.uid, lease.uid);
        const launch = await bwrapLaunch(command, dir, extra, { seccompFd: 3, ...(lease ? { uid: lease.uid } : {}) });
        return await runProbe(launch, dir, input);
      } finally {
        await rm(dir, { recursive: true, force: true });
        lease?.release();
      }
    })();
    probes.set(key, probe);
  }
  return probe;
}

function runProbe(launch: BwrapLaunch, cwd: string, input: string): Promise<Probe> {
  return new Promise<Probe>((resolve) => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const child = childProcess().spawn(launch.program, launch.args, {
      cwd,
      env,
      timeout: 30_000,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      if (out.length < 4096) out += chunk;
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (err.length < 4096) err += chunk;
    });
    const filter = child.stdio[3] as Writable | null;
    filter?.on('error', () => {});
    filter?.end(launch.seccomp ?? Buffer.alloc(0));
    child.stdin?.on('error', () => {});
    child.stdin?.end(input);
    child.on('error', (error: NodeJS.ErrnoException) =>
      resolve({
        ok: false,
        reason: error.code === 'ENOENT' ? 'bwrap is not installed' : `bwrap failed: ${error.message}`,
      }),
    );
    child.on('close', (code, signal) => {
      if (code === 0 && out === 'ok\n') return resolve({ ok: true });
      const detail = err.trim().split('\n').at(-1) || (signal ? `killed by ${signal}` : `exit code ${code}`);
      resolve({ ok: false, reason: `bwrap failed: ${detail}` });
    });
  });
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
