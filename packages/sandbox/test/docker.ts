// The real Docker daemon and the offline image the tests run against: started and built by
// scripts/docker.sh when missing (the build takes about a minute, once). Without Docker the
// tests fail with the script's error: they never skip.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';

export const TEST_IMAGE = 'openmanus-sandbox:bookworm';
export const docker = new Docker();

const script = join(import.meta.dirname, '..', '..', '..', 'scripts', 'docker.sh');
const run = (command: string) =>
  promisify(execFile)('bash', [script, command], { timeout: 300_000 }).catch((error: { stderr?: string }) => {
    throw new Error(`scripts/docker.sh ${command} failed: ${error.stderr ?? error}`);
  });

let ready: Promise<unknown> | undefined;
/** Resolves once a daemon answers and the test image exists. */
export const dockerReady = (): Promise<unknown> => {
  ready ??= run('start').then(() => run('image'));
  return ready;
};

/** How long the first test file may wait for the image to be built. */
export const SETUP_TIMEOUT = 300_000;
