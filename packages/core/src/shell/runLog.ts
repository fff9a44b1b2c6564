import { applyDelta, type StateDelta } from './stateDelta.js';

/**
 * A run's checkpoint file: JSON lines, each with its version `v` and an id no other line has
 * (the store's freshness check looks for it). The first line holds the full state, each later
 * one a delta from the line before.
 */
export const snapshotLine = (v: number, id: string, state: object): string =>
  `${JSON.stringify({ v, id, full: state })}\n`;

export const deltaLine = (v: number, id: string, delta: StateDelta): string =>
  `${JSON.stringify({ v, id, ...delta })}\n`;

/** The bytes every line with this version and id starts with. */
export const lineHead = (v: number, id: string): string => `{"v":${v},"id":${JSON.stringify(id)}`;

export interface RunLog {
  readonly state: Record<string, unknown>;
  readonly version: number;
  /** Where the last complete line ends; bytes after it are an append cut short by a crash. */
  readonly end: number;
  readonly lastLineStart: number;
  readonly lastLineId: string;
  /** Size of the line holding the full state that later lines build on. */
  readonly snapshotBytes: number;
}

/** Replays a run log; undefined when it holds no complete line yet. */
export function readRunLog(bytes: Buffer, file: string): RunLog | undefined {
  let log: RunLog | undefined;
  for (let start = 0, number = 1; ; number++) {
    const newline = bytes.indexOf(0x0a, start);
    if (newline === -1) return log;
    const end = newline + 1;
    try {
      log = replayLine(log, JSON.parse(bytes.toString('utf8', start, newline)), start, end);
    } catch (error) {
      throw new Error(`checkpoint file ${file} is damaged at line ${number}: ${(error as Error).message}`);
    }
    start = end;
  }
}

function replayLine(log: RunLog | undefined, line: unknown, start: number, end: number): RunLog {
  if (typeof line !== 'object' || line === null) throw new Error('not a JSON object');
  const { v: version, id, full, ...delta } = line as Record<string, unknown>;
  if (typeof version !== 'number' || typeof id !== 'string') throw new Error('no version and id');
  // A compacted file starts at the version it was compacted at.
  if (log ? version !== log.version + 1 : !(version >= 1))
    throw new Error(`version ${version} follows ${log?.version ?? 0}`);
  const position = { version, end, lastLineStart: start, lastLineId: id };
  if (isObject(full)) return { state: full, snapshotBytes: end - start, ...position };
  if (!log) throw new Error('the first line holds no full state');
  applyDelta(log.state, checkedDelta(delta));
  return { ...log, ...position };
}

function checkedDelta({ set, tail, unset }: Record<string, unknown>): StateDelta {
  if (set !== undefined && !isObject(set)) throw new Error('set is not an object');
  if (unset !== undefined && !(Array.isArray(unset) && unset.every((key) => typeof key === 'string')))
    throw new Error('unset is not a list of keys');
  if (tail !== undefined) {
    if (!isObject(tail)) throw new Error('tail is not an object');
    for (const entry of Object.values(tail)) {
      if (!isObject(entry) || typeof entry.at !== 'number' || !Array.isArray(entry.items))
        throw new Error('a tail entry is not { at, items }');
    }
  }
  return { set, tail, unset } as StateDelta;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
