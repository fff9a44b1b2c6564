import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { cancelOnSigint, type SessionIo } from '../src/session.js';

describe('Ctrl+C handling', () => {
  it('the first Ctrl+C cancels the run, the second forces the exit', () => {
    const stderr = new PassThrough();
    let printed = '';
    stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const io: SessionIo = { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env: {} };
    const exits: number[] = [];
    const listenersBefore = process.listenerCount('SIGINT');
    const { signal, dispose } = cancelOnSigint(io, (code) => exits.push(code));
    try {
      process.emit('SIGINT');
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBe('cancelled by Ctrl+C');
      expect(exits).toEqual([]);
      process.emit('SIGINT');
      expect(exits).toEqual([130]);
      expect(printed).toBe('\nCancelling… (press Ctrl+C again to force)\n\nForced exit.\n');
    } finally {
      dispose();
    }
    expect(process.listenerCount('SIGINT')).toBe(listenersBefore);
  });
});
