// The last resort against processes a call left that nothing else could kill (a fork bomb the
// sweeps did not outrun): the container is restarted. Its init is killed, so the kernel kills
// every other process of its pid namespace at once, none can fork any more, and it starts again
// with its files (the workspace, its own layer) as they were.
import type Docker from 'dockerode';
import { CONTAINER_CALL_MS, engineCall } from './engineCall.js';
import { type HostView, hostViewOf } from './hostProcesses.js';

export interface Restartable {
  /** Where the host sees the container's processes now (undefined: a remote daemon). */
  readonly host: () => HostView | undefined;
  /** Restarts the container (one restart at a time: calls that ask meanwhile share it). */
  readonly restart: () => Promise<void>;
}

export function restartable(container: Docker.Container, first: HostView | undefined): Restartable {
  let view = first;
  let restarting: Promise<void> | undefined;

  const restart = async () => {
    const { State } = await engineCall('inspect', (abortSignal) => container.inspect({ abortSignal }));
    // A frozen process dies only once thawed.
    if (State.Paused) await engineCall('unpause', (abortSignal) => container.unpause({ abortSignal }));
    if (view) {
      try {
        process.kill(view.initPid, 'SIGKILL');
      } catch {
        // Ended already.
      }
    } else await engineCall('kill', (abortSignal) => container.kill({ abortSignal })).catch(() => {});
    await engineCall(
      'wait',
      (abortSignal) => container.wait({ condition: 'not-running', abortSignal } as object),
      CONTAINER_CALL_MS,
    );
    await engineCall('start', (abortSignal) => container.start({ abortSignal }), CONTAINER_CALL_MS);
    const after = await engineCall('inspect', (abortSignal) => container.inspect({ abortSignal }));
    view = view && after.State.Pid > 0 ? await hostViewOf(after.State.Pid, container.id) : undefined;
  };

  return {
    host: () => view,
    restart: () => {
      restarting ??= restart().finally(() => {
        restarting = undefined;
      });
      return restarting;
    },
  };
}
