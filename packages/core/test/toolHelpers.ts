import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const tempWorkspace = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-test-')));
