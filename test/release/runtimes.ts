// The Node versions the packages support, each as a binary to run: scripts/setup.sh installs those
// the machine lacks into RUNTIMES_DIR/node<major>/bin/node (npm's `node` package).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const RUNTIMES_DIR = join(homedir(), '.cache', 'openmanus');

/** The oldest of each major that require()s an ES module graph without a flag, as the CommonJS entries need. */
export const SUPPORTED_NODES = [
  { major: 20, minor: 19 },
  { major: 22, minor: 12 },
  { major: 24, minor: 0 },
] as const;

const versionOf = (path: string): readonly number[] | undefined => {
  if (!existsSync(path)) return undefined;
  try {
    return execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 30_000 })
      .trim()
      .split('.')
      .map(Number);
  } catch {
    return undefined;
  }
};

/** A node binary of `major`, at `minor` or later; throws saying how to get one when there is none. */
export function nodeOf(major: number, minor: number): string {
  const candidates = [
    join(RUNTIMES_DIR, `node${major}`, 'bin', 'node'),
    process.execPath,
    '/usr/local/bin/node',
    '/usr/bin/node',
  ];
  const found = candidates.find((path) => {
    const [foundMajor, foundMinor = 0] = versionOf(path) ?? [];
    return foundMajor === major && foundMinor >= minor;
  });
  if (found === undefined) {
    throw new Error(
      `No Node ${major}.${minor}+ here (looked at ${candidates.join(', ')}): run scripts/setup.sh, which installs it into ${join(RUNTIMES_DIR, `node${major}`)}`,
    );
  }
  return found;
}

/** Whether Node `major.minor` is in `range`, a union of `^X.Y.Z` and `>=X.Y.Z` as our engines fields are. */
export function inRange(range: string, major: number, minor: number): boolean {
  return range.split('||').some((part) => {
    const match = /^\s*(\^|>=)(\d+)\.(\d+)\.\d+\s*$/.exec(part);
    if (match === null) throw new Error(`engines.node "${range}" is not a union of ^X.Y.Z and >=X.Y.Z`);
    const [operator, lowMajor, lowMinor] = [match[1], Number(match[2]), Number(match[3])];
    const atLeast = major > lowMajor || (major === lowMajor && minor >= lowMinor);
    return atLeast && (operator === '>=' || major === lowMajor);
  });
}
