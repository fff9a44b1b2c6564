// The Daytona provider: SandboxManus's remote sandbox, one per run, made through the official SDK.
// The SDK is heavy, so it is loaded on the first sandbox, not when this package is imported.
import type { SandboxProvider, SandboxRequest } from '@openmanus/core';
import { type DaytonaSandbox, daytonaSandbox, describeDaytonaError } from './daytonaSandbox.js';
import type { DaytonaSettings } from './daytonaSettings.js';

export interface DaytonaSandboxOptions {
  /** The workspace directory inside the sandbox (default /workspace, as OpenManus's image has it). */
  readonly workspace?: string;
  /** A command's time limit when the caller gives none, in ms (default 300 000, `[sandbox].timeout`). */
  readonly defaultTimeoutMs?: number;
  /** How long making the sandbox may take, in seconds (default 60). */
  readonly createTimeoutSeconds?: number;
  /** Every API request's time limit, in ms (default 60 000): an unreachable service fails rather than hangs. */
  readonly requestTimeoutMs?: number;
}

export interface DaytonaSandboxProvider extends SandboxProvider {
  create(request: SandboxRequest): Promise<DaytonaSandbox>;
}

const RUN_LABEL = 'openmanus.run-id';

export function createDaytonaSandboxProvider(
  settings: DaytonaSettings,
  options: DaytonaSandboxOptions = {},
): DaytonaSandboxProvider {
  const workspace = options.workspace ?? '/workspace';
  let client: Promise<import('@daytonaio/sdk').Daytona> | undefined;
  const connect = () => {
    client ??= import('@daytonaio/sdk').then(
      ({ Daytona }) =>
        new Daytona({
          apiKey: settings.apiKey,
          apiUrl: settings.serverUrl,
          target: settings.target,
          requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
          // Plain HTTP polling: no event socket held open for the life of the process.
          useDeprecatedPolling: true,
        }),
    );
    return client;
  };

  const create = async (request: SandboxRequest): Promise<DaytonaSandbox> => {
    request.signal.throwIfAborted();
    const daytona = await connect();
    let remote: import('@daytonaio/sdk').Sandbox | undefined;
    let deleted: Promise<void> | undefined;
    const dispose = () => {
      deleted ??= remote ? remote.delete().catch(() => {}) : Promise.resolve();
      return deleted;
    };
    try {
      // As SandboxManus makes it: public (the preview links work without a token), the VNC
      // password in its environment, stopped after 15 idle minutes, archived after a day.
      remote = await daytona.create(
        {
          image: settings.imageName,
          public: true,
          labels: { [RUN_LABEL]: request.runId },
          envVars: {
            VNC_PASSWORD: settings.vncPassword,
            CHROME_PERSISTENT_SESSION: 'true',
            RESOLUTION: '1024x768x24',
            RESOLUTION_WIDTH: '1024',
            RESOLUTION_HEIGHT: '768',
            ANONYMIZED_TELEMETRY: 'false',
          },
          autoStopInterval: 15,
          autoArchiveInterval: 24 * 60,
        },
        { timeout: options.createTimeoutSeconds ?? 60 },
      );
      request.signal.throwIfAborted();
      await remote.fs.createFolder(workspace, '755');
      // The image's services (desktop, browser, web server) run in a session of their own.
      const session = `openmanus-entrypoint-${request.runId}`.replace(/[^\w-]/g, '-');
      await remote.process.createSession(session);
      await remote.process.executeSessionCommand(session, { command: settings.entrypoint, runAsync: true });
      request.signal.throwIfAborted();
    } catch (error) {
      await dispose();
      if (request.signal.aborted) throw error;
      throw new Error(
        `daytona sandbox: could not make a sandbox at ${settings.serverUrl}: ${describeDaytonaError(error)}`,
      );
    }
    return daytonaSandbox({
      remote,
      workspace,
      defaultTimeoutMs: options.defaultTimeoutMs ?? 300_000,
      dispose,
    });
  };

  return { name: 'daytona', create };
}
