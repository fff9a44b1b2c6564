import { err, ok, type Result } from '../result.js';
import { SCHEMA_VERSION } from './state.js';

/** A saved state as parsed JSON, not yet known to be valid. */
export type SavedState = Readonly<Record<string, unknown>>;

/** Why a saved state cannot be run: a later version of the package wrote it, or it is damaged. */
export interface StateRefusal {
  readonly code: 'STATE_NEWER' | 'STATE_DAMAGED';
  readonly message: string;
}

const damagedAt = (message: string): StateRefusal => ({ code: 'STATE_DAMAGED', message });

/** Turns a state of schema version n into version n + 1. Pure: builds a new object, never changes its input. */
export type Migration = (state: SavedState) => Record<string, unknown>;

/**
 * v2 keeps what each policy remembers under `policies`, by policy name; v1 had stuck detection's
 * memory at the top level. v2's other additions (`runId`, `tools`, `toolData`, a call's
 * `progress` and `waiting`) are optional: a v1 state has none of them to fill in.
 */
const policiesFromStuck: Migration = ({ stuck, ...rest }) => ({
  ...rest,
  schemaVersion: 2,
  policies: stuck === undefined ? {} : { stuck },
});

/**
 * v3 gives a run's error a code (`RunError`); v2 had only its message. A v2 error becomes
 * `{ code: 'LEGACY', message }`: what failed cannot be told from the words alone.
 */
const codedError: Migration = ({ error, ...rest }) => ({
  ...rest,
  schemaVersion: 3,
  ...(error === undefined ? {} : { error: typeof error === 'string' ? { code: 'LEGACY', message: error } : error }),
});

/** By schema version n: the step from n to n + 1. Every released version below SCHEMA_VERSION has one. */
export const migrations: Readonly<Record<number, Migration>> = {
  1: policiesFromStuck,
  2: codedError,
};

/**
 * Brings a saved state up to SCHEMA_VERSION, one version at a time. A current state comes back
 * as the same object (nothing copied); a newer one is refused, since its fields cannot be known.
 */
export function migrate(saved: SavedState): Result<SavedState, StateRefusal> {
  const version = saved.schemaVersion;
  if (typeof version !== 'number' || !Number.isInteger(version)) {
    return err(
      damagedAt(`saved state is damaged at schemaVersion: expected an integer, received ${describeValue(version)}`),
    );
  }
  if (version > SCHEMA_VERSION) {
    return err({
      code: 'STATE_NEWER',
      message:
        `saved state has schemaVersion ${version}, newer than this version of @openmanus/core reads ` +
        `(${SCHEMA_VERSION}); upgrade the package`,
    });
  }
  let state = saved;
  for (let from = version; from < SCHEMA_VERSION; from++) {
    const migration = migrations[from];
    if (!migration) {
      return err(
        damagedAt(`saved state is damaged at schemaVersion: no released version of @openmanus/core wrote ${version}`),
      );
    }
    state = migration(state);
  }
  return ok(state);
}

/** A value as an error message shows it: short, and never throws (bigints, cycles, huge strings). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}…` : JSON.stringify(value);
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return `${value}n`;
    default:
      return typeof value;
  }
}
