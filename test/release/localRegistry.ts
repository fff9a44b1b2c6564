// A Verdaccio registry on 127.0.0.1 for the release tests, in a folder of its own: our scope lives
// in its storage only (published there, never looked up on npm), everything else is proxied to
// registry.npmjs.org so that our dependencies install. A user is added to publish with.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeOf } from './runtimes.js';
import { repoRoot } from './workspace.js';

export interface PublishedManifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
}

export interface LocalRegistry {
  /** `http://127.0.0.1:<port>/`. */
  readonly url: string;
  /** The environment for npm and pnpm: this registry, its token, and an npm cache in the registry's folder. */
  readonly env: NodeJS.ProcessEnv;
  /** The registry's document of a package: its versions' manifests as published. */
  packument(name: string): Promise<{ readonly versions: Readonly<Record<string, PublishedManifest>> }>;
  /** Stops Verdaccio (and waits for it to exit). */
  close(): Promise<void>;
}

const verdaccioBin = join(
  dirname(createRequire(join(repoRoot, 'package.json')).resolve('verdaccio/package.json')),
  'bin',
  'verdaccio',
);

/** A Node for Verdaccio, which wants 22 or newer, whichever Node runs the tests. */
const verdaccioNode = () => {
  const [major = 0] = process.versions.node.split('.').map(Number);
  return major >= 22 ? process.execPath : nodeOf(22, 0);
};

const config = (dir: string) => `storage: ${JSON.stringify(join(dir, 'storage'))}
auth:
  htpasswd:
    file: ${JSON.stringify(join(dir, 'htpasswd'))}
uplinks:
  npmjs:
    url: https://registry.npmjs.org/
    timeout: 60s
packages:
  '@openmanus/*':
    access: $all
    publish: $authenticated
  '**':
    access: $all
    publish: $authenticated
    proxy: npmjs
max_body_size: 200mb
web:
  enable: false
middlewares:
  audit:
    enabled: false
log:
  type: stdout
  format: json
  level: warn
`;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port for the local registry');
  return address.port;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const gone = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
  if (!gone) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Waits until Verdaccio answers its ping; fails with its output if it exits or takes a minute. */
async function ready(child: ChildProcess, url: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Verdaccio exited with ${child.exitCode}:\n${output()}`);
    const up = await fetch(`${url}-/ping`).then(
      (response) => response.ok,
      () => false,
    );
    if (up) return;
    await sleep(200);
  }
  throw new Error(`Verdaccio did not answer on ${url} within a minute:\n${output()}`);
}

/**
 * The npm and pnpm settings of the registry, with none of the host's (nor of the pnpm running the
 * tests). npm's cache is the registry folder's own, gone with it: nothing lands in ~/.npm, and no
 * run can read another's documents of our scope (a cache shared across runs would hold them under
 * 127.0.0.1:<port>, and --prefer-offline would trust them when a later registry gets that port).
 * Only the first install of a run downloads; the second reads that cache.
 */
function environment(dir: string): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && !/^pnpm_/i.test(name));
  return {
    ...Object.fromEntries(inherited),
    npm_config_userconfig: join(dir, 'npmrc'),
    npm_config_cache: join(dir, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

/** Starts Verdaccio with its config, storage and npmrc in `dir` (which the caller removes after `close`). */
export async function startLocalRegistry(dir: string): Promise<LocalRegistry> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.yaml'), config(dir));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const child = spawn(verdaccioNode(), [verdaccioBin, '--config', join(dir, 'config.yaml'), '--listen', url], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = `${output}${chunk}`.slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  try {
    await ready(child, url, () => output);
    const name = 'openmanus-release';
    const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, password: randomUUID() }),
    });
    const { token } = (await response.json()) as { token?: string };
    if (!response.ok || token === undefined) throw new Error(`Verdaccio refused the user (${response.status})`);
    await writeFile(join(dir, 'npmrc'), `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
  } catch (error) {
    await stop(child);
    throw error;
  }
  return {
    url,
    env: environment(dir),
    async packument(name) {
      const response = await fetch(`${url}${name.replace('/', '%2f')}`);
      if (!response.ok) throw new Error(`${name} is not on the local registry (${response.status})`);
      return (await response.json()) as { versions: Record<string, PublishedManifest> };
    },
    close: () => stop(child),
  };
}
