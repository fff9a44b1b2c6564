import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onAbort } from '../src/onAbort.js';

describe('onAbort', () => {
  it('calls each listener still held once when the signal aborts, in the order they were added', () => {
    const controller = new AbortController();
    const heard: string[] = [];
    onAbort(controller.signal, () => heard.push('first'));
    const release = onAbort(controller.signal, () => heard.push('released'));
    onAbort(controller.signal, () => heard.push('last'));
    release();
    controller.abort();
    controller.abort();
    expect(heard).toEqual(['first', 'last']);
  });

  it('puts one event listener on a signal however many are added and released', () => {
    const controller = new AbortController();
    for (let i = 0; i < 100; i++) onAbort(controller.signal, () => {})();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
  });

  it('calls a listener added to a signal that has already aborted at once', () => {
    const heard: string[] = [];
    onAbort(AbortSignal.abort(), () => heard.push('late'))();
    expect(heard).toEqual(['late']);
  });

  it('keeps the listeners of different signals apart', () => {
    const a = new AbortController();
    const b = new AbortController();
    const heard: string[] = [];
    onAbort(a.signal, () => heard.push('a'));
    onAbort(b.signal, () => heard.push('b'));
    b.abort();
    expect(heard).toEqual(['b']);
  });
});
