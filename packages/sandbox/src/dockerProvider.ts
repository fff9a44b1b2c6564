// The Docker provider: a container per run through the Engine API — limits applied, no network
// unless enabled, the run's workspace bound at work_dir, a non-root user, and labels that let the
// next process remove what a crashed one left behind.
import { randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxProvider, SandboxRequest } from '@openmanus/core';
import { canSwitchUser, leaseUid, lendWorkspace } from '@openmanus/core/internal';
import Docker from 'dockerode';
import { type DockerSandbox, dockerSandbox, type Owner } from './dockerSandbox.js';
import { CONTAINER_CALL_MS, engineCall } from './engineCall.js';
import { hostViewOf } from './hostProcesses.js';
import { currentOwner, ownerHasEnded } from './owner.js';
import { DEFAULT_SANDBOX_SETTINGS, memoryBytes, type SandboxSettings } from './settings.js';

/** The labels every sandbox container carries. */
export const SANDBOX_LABEL = 'openmanus.sandbox';
const RUN_LABEL = 'openmanus.run-id';
const OWNER_LABEL = 'openmanus.owner';
/** A workspace the provider made for a run that had none (removed with the container). */
const TEMP_WORKSPACE_LABEL = 'openmanus.temp-workspace';

export interface DockerSandboxOptions extends Partial<Omit<SandboxSettings, 'useSandbox'>> {
  /** The Engine API client (default: `DOCKER_HOST`, else /var/run/docker.sock). */
  readonly docker?: Docker;
  /** Most processes and threads at once in a container (default 256: a fork bomb stops there). */
  readonly pidsLimit?: number;
  /** The host directory bound at `work_dir` for runs that name no workspace (default: a temporary one per run). */
  readonly workspace?: string;
}

export interface DockerSandboxProvider extends SandboxProvider {
  create(request: SandboxRequest): Promise<DockerSandbox>;
  /**
   * Removes the sandbox containers whose creating process has ended (crashed) on this host, their
   * temporary workspaces, and gives back the workspaces lent to them; returns the containers' names. Runs before the first sandbox is made.
   */
  reapOrphans(): Promise<string[]>;
}

/** Who the container runs as, and how to give the workspace back afterwards. */
interface SandboxUser {
  readonly owner: Owner;
  readonly release: () => Promise<void>;
}

/**
 * Never root. A root host lends the workspace to a uid of core's sandbox range for the sandbox's
 * life (entries given back when it closes); any other host runs the container as itself, so what
 * the code writes belongs to the user.
 */
async function sandboxUser(workspace: string): Promise<SandboxUser> {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { owner: { uid, gid: process.getgid?.() ?? uid }, release: async () => {} };
  if (!canSwitchUser()) {
    // Without the range mapped, nobody: it can read a world-readable workspace but not write it.
    return { owner: { uid: 65534, gid: 65534 }, release: async () => {} };
  }
  const lease = leaseUid();
  const giveBack = await lendWorkspace(workspace, lease.uid).catch((error: unknown) => {
    lease.release();
    throw error;
  });
  return {
    owner: { uid: lease.uid, gid: lease.uid },
    release: async () => {
      await giveBack();
      lease.release();
    },
  };
}

/**
 * Gives back a workspace that a crashed process had lent to its sandbox's uid: lending it anew
 * hands entries of a range uid no process runs as back to this process, and returning it at once
 * leaves everything as it was before the crash.
 */
async function reclaimWorkspace(workspace: string): Promise<void> {
  if (process.getuid?.() !== 0 || !canSwitchUser()) return;
  const lease = leaseUid();
  try {
    await (await lendWorkspace(workspace, lease.uid))();
  } finally {
    lease.release();
  }
}

/** An Engine API error as a sentence (dockerode puts the daemon's message in `json.message`). */
function describe(error: unknown): string {
  const json = (error as { json?: { message?: string } } | null)?.json;
  return json?.message ?? (error instanceof Error ? error.message : String(error));
}

export function createDockerSandboxProvider(options: DockerSandboxOptions = {}): DockerSandboxProvider {
  const settings = { ...DEFAULT_SANDBOX_SETTINGS, ...options };
  const memory = memoryBytes(settings.memoryLimit);
  if (memory === undefined)
    throw new Error(
      `docker sandbox: memory_limit "${settings.memoryLimit}" is not a size such as "512m" (at least 6m)`,
    );
  if (!(settings.cpuLimit > 0)) throw new Error(`docker sandbox: cpu_limit must be positive, got ${settings.cpuLimit}`);
  const docker = options.docker ?? new Docker();
  let reaped: Promise<unknown> | undefined;

  /** Removes a container, whatever its state (a paused one included); never waits past its time limit. */
  const removeContainer = (container: Docker.Container) =>
    engineCall('remove', (abortSignal) => container.remove({ force: true, abortSignal }), CONTAINER_CALL_MS).catch(
      () => {},
    );

  const reapOrphans = async (): Promise<string[]> => {
    const containers = await engineCall('list', (abortSignal) =>
      docker.listContainers({ all: true, filters: { label: [`${SANDBOX_LABEL}=1`] }, abortSignal }),
    );
    const orphans = containers.filter((info) => ownerHasEnded(info.Labels[OWNER_LABEL]));
    await Promise.all(
      orphans.map(async (info) => {
        await removeContainer(docker.getContainer(info.Id));
        const temp = info.Labels[TEMP_WORKSPACE_LABEL];
        if (temp) await rm(temp, { recursive: true, force: true });
        else
          for (const mount of info.Mounts)
            if (mount.Type === 'bind') await reclaimWorkspace(mount.Source).catch(() => {});
      }),
    );
    return orphans.map((info) => (info.Names[0] ?? info.Id).replace(/^\//, ''));
  };

  const create = async (request: SandboxRequest): Promise<DockerSandbox> => {
    reaped ??= reapOrphans().catch(() => []);
    await reaped;
    request.signal.throwIfAborted();
    const given = request.workspace ?? options.workspace;
    const temp = given ? undefined : await mkdtemp(join(tmpdir(), 'openmanus-sandbox-'));
    const hostDir = await realpath(given ?? (temp as string));
    const user = await sandboxUser(hostDir);
    let container: Docker.Container | undefined;
    const dispose = async () => {
      if (container) await removeContainer(container);
      await user.release();
      if (temp) await rm(temp, { recursive: true, force: true });
    };
    try {
      const made = await engineCall('create', (abortSignal) =>
        docker.createContainer({
          name: `sandbox_${randomBytes(4).toString('hex')}`,
          Image: settings.image,
          // An idle command keeps the container up; docker-init (Init) reaps orphaned processes.
          Cmd: ['tail', '-f', '/dev/null'],
          User: `${user.owner.uid}:${user.owner.gid}`,
          WorkingDir: settings.workDir,
          Env: ['HOME=/tmp', 'LANG=C.UTF-8'],
          Labels: {
            [SANDBOX_LABEL]: '1',
            [RUN_LABEL]: request.runId,
            [OWNER_LABEL]: currentOwner(),
            ...(temp ? { [TEMP_WORKSPACE_LABEL]: temp } : {}),
          },
          HostConfig: {
            Init: true,
            Mounts: [{ Type: 'bind', Source: hostDir, Target: settings.workDir, ReadOnly: false }],
            Memory: memory,
            // No swap beyond the limit: a memory hog is killed, not slowed down.
            MemorySwap: memory,
            NanoCpus: Math.round(settings.cpuLimit * 1e9),
            PidsLimit: options.pidsLimit ?? 256,
            ...(settings.networkEnabled ? {} : { NetworkMode: 'none' }),
            CapDrop: ['ALL'],
            SecurityOpt: ['no-new-privileges'],
          },
          abortSignal,
        } as Docker.ContainerCreateOptions),
      );
      container = made;
      request.signal.throwIfAborted();
      await engineCall('start', (abortSignal) => made.start({ abortSignal }), CONTAINER_CALL_MS);
      request.signal.throwIfAborted();
    } catch (error) {
      await dispose();
      if (request.signal.aborted) throw error;
      if ((error as { statusCode?: number }).statusCode === 404 && !container) {
        throw new Error(
          `docker sandbox: image "${settings.image}" is not available (${describe(error)}): pull it, or build the offline image with scripts/docker.sh image`,
        );
      }
      throw new Error(`docker sandbox: could not start a container: ${describe(error)}`);
    }
    const started = container;
    const { State } = await engineCall('inspect', (abortSignal) => started.inspect({ abortSignal })).catch(() => ({
      State: { Pid: 0 },
    }));
    const hostView = State.Pid > 0 ? await hostViewOf(State.Pid, container.id) : undefined;
    return dockerSandbox({
      docker,
      container,
      owner: user.owner,
      ...(hostView ? { hostView } : {}),
      workspace: settings.workDir,
      defaultTimeoutMs: settings.timeout * 1000,
      dispose,
    });
  };

  return { name: 'docker', create, reapOrphans };
}
