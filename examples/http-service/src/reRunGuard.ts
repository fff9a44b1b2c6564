import { createHash } from 'node:crypto';
import { appendFile, mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tool, ToolReturn, ToolScope } from '@openmanus/core';

/**
 * A tool that declares it must not be re-run blindly: its side effects (a payment, a deploy, a
 * mail, code whose effects you cannot tell) must not happen twice. When the process dies during
 * one of its calls, the resumed run does not run the call again; it tells the model that the
 * earlier attempt was interrupted and may or may not have taken effect.
 *
 * Local stand-in for a flag core does not have yet (`ToolSpec.reRun: 'never'`): the service
 * honours it by wrapping such tools with a `ReRunGuard`.
 */
export type NoBlindReRun<T extends Tool = Tool> = T & { readonly reRun: 'never' };

export function neverReRun<T extends Tool>(tool: T): NoBlindReRun<T> {
  return { ...tool, reRun: 'never' };
}

export const declaresNoBlindReRun = (tool: Tool): tool is NoBlindReRun =>
  (tool as { reRun?: unknown }).reRun === 'never';

export interface ReRunGuard {
  /** The tool as the service runs it: a marker per call, written (and flushed) before the call starts. */
  wrap(tool: Tool): Tool;
  /** Drops a run's markers once its calls can no longer be resumed (the run is over). */
  forget(runId: string): Promise<void>;
}

/**
 * Markers in `directory`, one file per call, keyed on the run id and the call's effect id (the
 * idempotency key core gives every tool call: stable across a resume). A call whose marker
 * exists has been started before; it is answered from the marker instead of being run again.
 */
export function createReRunGuard(directory: string): ReRunGuard {
  // Hashed: any run id makes one safe directory name; the marker itself names the run.
  const runDir = (runId: string) => join(directory, createHash('sha256').update(runId).digest('hex').slice(0, 32));
  const markerOf = (scope: ToolScope) =>
    join(runDir(scope.runId), encodeURIComponent(scope.effectId).replace(/\./g, '%2E'));

  return {
    wrap(tool: Tool): Tool {
      const { name } = tool.spec;
      return {
        spec: tool.spec,
        parse: tool.parse,
        async execute(args: unknown, scope: ToolScope): Promise<ToolReturn> {
          const marker = markerOf(scope);
          await mkdir(runDir(scope.runId), { recursive: true, mode: 0o700 });
          const handle = await open(marker, 'wx', 0o600).catch((error: NodeJS.ErrnoException) => {
            if (error.code === 'EEXIST') return undefined;
            throw error;
          });
          if (!handle) return interrupted(name, await readFile(marker, 'utf8').catch(() => ''));
          try {
            await handle.writeFile(
              `started ${scope.runId}/${scope.effectId} (${name}) at ${new Date().toISOString()}\n`,
            );
            // On the disk before the side effects begin: a crash now leaves the marker behind.
            await handle.sync();
          } finally {
            await handle.close();
          }
          const returned = await tool.execute(args, scope);
          await appendFile(marker, `finished at ${new Date().toISOString()}\n`);
          return returned;
        },
      };
    },
    async forget(runId: string): Promise<void> {
      await rm(runDir(runId), { recursive: true, force: true });
    },
  };
}

/** What the model is told instead of a second run of the call. */
function interrupted(name: string, marker: string): ToolReturn {
  const started = /^started .* at (\S+)$/m.exec(marker)?.[1];
  const when = started ? ` (started ${started})` : '';
  const error = /^finished at /m.test(marker)
    ? `an earlier attempt of this ${name} call${when} ran to its end, but the service stopped before its result ` +
      'was recorded, so its effects most likely took place. It was not run again. Check its effects before ' +
      'calling it again.'
    : `an earlier attempt of this ${name} call${when} was interrupted when the service stopped: it may or may ` +
      `not have taken effect, partly or wholly. It was not run again, because ${name} must not be re-run ` +
      'blindly. Check whether its effects took place before calling it again.';
  return { ok: false, error };
}
