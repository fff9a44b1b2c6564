// The error family holds across two copies of the package: a host whose dependencies bring their
// own @openmanus/core still recognises the errors another copy throws, by brand and code.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenManusError } from '../src/errors.js';
import { TranscriptError } from '../src/llm/transcript.js';
import { InvalidStateError } from '../src/shell/restore.js';
import { RunInProgressError } from '../src/shell/run.js';
import { CheckpointConflictError } from '../src/shell/store.js';

type Core = typeof import('../src/index.js');

const packageDir = join(import.meta.dirname, '..');
let copyDir: string;
let first: Core;
let second: Core;

beforeAll(async () => {
  // Inside the package, so the copy's imports (neverthrow, zod) resolve as the original's do.
  copyDir = await mkdtemp(join(packageDir, 'test', '.copy-'));
  await cp(join(packageDir, 'dist'), join(copyDir, 'dist'), { recursive: true });
  first = await import(pathToFileURL(join(packageDir, 'dist', 'index.js')).href);
  second = await import(pathToFileURL(join(copyDir, 'dist', 'index.js')).href);
});
afterAll(() => rm(copyDir, { recursive: true, force: true }));

describe('OpenManusError across copies of the package', () => {
  it('the copies are distinct: instanceof fails between them', () => {
    expect(second.RunInProgressError).not.toBe(first.RunInProgressError);
    expect(new second.RunInProgressError('busy')).not.toBeInstanceOf(first.RunInProgressError);
  });

  it('isInstance of either copy recognises an error of the other', () => {
    const fromSecond = new second.RunInProgressError('busy');
    expect(first.OpenManusError.isInstance(fromSecond)).toBe(true);
    expect(first.RunInProgressError.isInstance(fromSecond)).toBe(true);
    expect(OpenManusError.isInstance(fromSecond)).toBe(true);
    const fromFirst = new first.InvalidStateError('gone', 'RUN_NOT_FOUND');
    expect(second.InvalidStateError.isInstance(fromFirst)).toBe(true);
    expect(second.RunInProgressError.isInstance(fromFirst)).toBe(false);
  });

  it("a subclass's isInstance checks its own codes, not the name", () => {
    const conflict = new second.CheckpointConflictError('r1', 1, 2);
    expect(CheckpointConflictError.isInstance(conflict)).toBe(true);
    expect(InvalidStateError.isInstance(conflict)).toBe(false);
    const impostor = Object.assign(new Error('not ours'), { name: 'RunInProgressError', code: 'RUN_IN_PROGRESS' });
    expect(RunInProgressError.isInstance(impostor)).toBe(false);
    expect(OpenManusError.isInstance(impostor)).toBe(false);
    for (const value of [undefined, null, 'RUN_IN_PROGRESS', { code: 'RUN_IN_PROGRESS' }]) {
      expect(OpenManusError.isInstance(value)).toBe(false);
    }
  });
});

describe('an OpenManusError', () => {
  it('keeps its class name, code, message and cause, and is an Error', () => {
    const cause = new SyntaxError('Unexpected token');
    const error = new TranscriptError('the transcript is not JSON', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(OpenManusError);
    expect(error).toMatchObject({ name: 'TranscriptError', code: 'TRANSCRIPT_INVALID', cause });
    expect(error.message).toBe('the transcript is not JSON');
    expect(String(error)).toBe('TranscriptError: the transcript is not JSON');
  });

  it('shows no brand among its keys or in its JSON', () => {
    const error = new InvalidStateError('saved state is damaged', 'STATE_DAMAGED');
    expect(Object.keys(error)).toEqual(expect.not.arrayContaining([expect.stringMatching(/openmanus/)]));
    expect(Object.getOwnPropertySymbols(error)).toEqual([]);
    expect(JSON.parse(JSON.stringify(error))).toEqual({ name: 'InvalidStateError', code: 'STATE_DAMAGED' });
  });
});
