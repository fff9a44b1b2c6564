// Flows saved by earlier versions still load: a v1 flow's error, a message only, gets a code.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidStateError } from '@openmanus/core';
import { describe, expect, it } from 'vitest';
import { restoreFlow } from '../src/flowSchema.js';
import { FLOW_SCHEMA_VERSION } from '../src/flowState.js';

// Saved by a released version. Never edit or delete it: every later version must load it.
const loadFixture = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', file), 'utf8'));

describe('restoreFlow: flows saved by v1', () => {
  it('loads a stopped flow as the current version, its error coded LEGACY, nothing else changed', async () => {
    const saved = loadFixture('flow-v1-stopped.json');
    const flow = await restoreFlow(saved);
    const { error, schemaVersion: _v1, ...rest } = saved;
    expect(flow).toEqual({ ...rest, schemaVersion: FLOW_SCHEMA_VERSION, error: { code: 'LEGACY', message: error } });
    // Migrating builds a new flow; what the caller passed is left as it was.
    expect(saved).toEqual(loadFixture('flow-v1-stopped.json'));
  });

  it('loads a v1 flow without an error without one', async () => {
    const { error: _error, ...saved } = loadFixture('flow-v1-stopped.json');
    expect(await restoreFlow(saved)).not.toHaveProperty('error');
  });

  it('refuses an error that is neither a message nor a coded error, and a newer flow, with their codes', async () => {
    const damaged = restoreFlow({ ...loadFixture('flow-v1-stopped.json'), error: 42 });
    await expect(damaged).rejects.toSatisfy(
      (error) => InvalidStateError.isInstance(error) && error.code === 'STATE_DAMAGED' && /error/.test(error.message),
    );
    const newer = restoreFlow({ ...loadFixture('flow-v1-stopped.json'), schemaVersion: FLOW_SCHEMA_VERSION + 1 });
    await expect(newer).rejects.toMatchObject({ name: 'InvalidStateError', code: 'STATE_NEWER' });
  });
});
