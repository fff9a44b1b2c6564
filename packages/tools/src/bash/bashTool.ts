import { mkdir, realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  defineTool,
  err,
  ok,
  type Result,
  type SandboxMode,
  type SandboxProcess,
  type SandboxProvider,
  sandboxFor,
} from '@openmanus/core';
import { z } from 'zod';
import { workspaceOf } from '../workspace.js';
import { chooseIsolation, startHostShell, startSandboxShell } from './launch.js';
import {
  type CommandEnd,
  type CommandOptions,
  type CommandResult,
  type ShellExit,
  type ShellSession,
  startShell,
} from './session.js';

export interface BashOptions {
  /** Where the shell starts (default: the run's workspace, else `./workspace`). */
  readonly workspace?: string;
  /** Seconds a command may run when the model does not say (default 120, as in OpenManus). */
  readonly defaultTimeoutSec?: number;
  /** The most seconds the model may ask for (default 600). */
  readonly maxTimeoutSec?: number;
  /** Characters kept of a command's stdout and of its stderr each; the middle of the rest is cut (default 20000). */
  readonly maxOutputChars?: number;
  /**
   * `auto` (default): bubblewrap when it works here (the workspace writable, the system read-only,
   * no network, nothing of the host's environment), else the host's user with a scrubbed
   * environment, said once per process. `bwrap`: bubblewrap or a refusal. `none`: no bubblewrap.
   */
  readonly sandbox?: SandboxMode;
  /** Where the once-per-process notice that the sandbox is unavailable goes (default `process.emitWarning`). */
  readonly onNotice?: (message: string) => void;
  /**
   * Where the shell runs when the run has no sandbox of its own: this provider's sandbox for the
   * run (shared with the other tools given it), starting in its workspace. Without either, the
   * shell runs on this host, isolated as `sandbox` says.
   */
  readonly sandboxProvider?: SandboxProvider;
}

/** A command that ran (in part at least). */
type Ran = CommandResult & { readonly end: Exclude<CommandEnd, { readonly kind: 'notStarted' }> };

const RESET = 'the working directory, variables and functions were reset';
const RUN_ENDED = 'the run has ended; no shell is started for it.';

const describeExit = (exit: ShellExit) => (exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`);

/** A command's output as the model reads it: stdout, then stderr under its own heading. */
function shown({ stdout, stderr }: CommandResult): string[] {
  const chomp = (text: string) => text.replace(/\n+$/, '');
  const errors = chomp(stderr);
  return [chomp(stdout), errors ? `[stderr]\n${errors}` : ''].filter(Boolean);
}

/** The shell of one run: started on first use, restarted when it dies or times out, one command at a time. */
class RunShell {
  private session: ShellSession | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    /** Starts bash where this run's shell lives, or says why it cannot. */
    private readonly start: () => Promise<Result<SandboxProcess, string>>,
    private readonly maxChars: number,
  ) {}

  /** Runs `task` after the calls before it (a cancelled call's command may still be stopping). */
  serial<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task);
    this.queue = next.catch(() => {});
    return next;
  }

  /** The live session, started if there is none. */
  async current(): Promise<Result<ShellSession, string>> {
    // A shell that ended by itself still has its leftovers (escaped processes, its home) to clean up.
    if (this.session?.exit) await this.stop();
    if (this.session) return ok(this.session);
    if (this.closed) return err(RUN_ENDED);
    try {
      const started = await this.start();
      if (!started.isOk()) return err(started.error);
      const session = await startShell(started.value, this.maxChars);
      if (this.closed) {
        await session.close();
        return err(RUN_ENDED);
      }
      this.session = session;
      return ok(session);
    } catch (error) {
      return err((error as Error).message);
    }
  }

  /**
   * Runs `command` in the live shell. A shell that had ended since the last command (however
   * late it was noticed: nothing of the command ran) is replaced first, and its end reported.
   */
  async run(
    command: string,
    options: CommandOptions,
  ): Promise<Result<{ readonly result: Ran; readonly replaced?: ShellExit }, string>> {
    let replaced = this.session?.exit;
    for (let attempt = 0; attempt < 2; attempt++) {
      const session = await this.current();
      if (!session.isOk()) return err(session.error);
      const result = await session.value.run(command, options);
      const { end } = result;
      if (end.kind !== 'notStarted') return ok({ result: { ...result, end }, ...(replaced ? { replaced } : {}) });
      replaced = end.exit;
      await this.stop();
    }
    return err(
      `the shell ended before the command could run (${replaced ? describeExit(replaced) : 'no reason given'}).`,
    );
  }

  async stop(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    await session?.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stop();
  }
}

/**
 * OpenManus's bash tool: one persistent `/bin/bash` per run (cd and variables carry over), the exit
 * status and both streams of every command, a timeout the model sets after which the shell is
 * restarted, interrupts that stop the command and keep the shell, and `restart`.
 */
export function createBash(options: BashOptions = {}) {
  const defaultTimeout = options.defaultTimeoutSec ?? 120;
  const maxTimeout = options.maxTimeoutSec ?? 600;
  const maxChars = options.maxOutputChars ?? 20_000;
  const sandbox = options.sandbox ?? 'auto';
  const configured = options.workspace === undefined ? undefined : resolve(options.workspace);
  const isolation = () => chooseIsolation(sandbox, options.onNotice);

  return defineTool({
    name: 'bash',
    description: [
      'Run a command in a bash shell that persists for this task: the working directory (cd), variables and',
      'functions carry over to the next call. It starts in the workspace. Each result shows stdout, stderr and the',
      'exit code; long output is cut in the middle. Commands get no input (stdin is empty): use non-interactive',
      `flags (apt-get -y, git --no-pager). A command may run for \`timeout\` seconds (default ${defaultTimeout},`,
      `at most ${maxTimeout}); one that runs longer is killed with everything it started, and the shell is restarted`,
      '(cd and variables reset). Run servers and other long jobs in the background with their output sent to a file,',
      'e.g. `python3 -m http.server > server.log 2>&1 &`. `restart: true` starts a fresh shell.',
    ].join(' '),
    parameters: z.object({
      command: z
        .string()
        .describe('The bash command to run; several lines and && chains are fine. May be empty with restart: true.'),
      restart: z
        .boolean()
        .optional()
        .describe('Kill the shell and everything it runs, and start a fresh one (before running `command`, if any).'),
      timeout: z
        .number()
        .positive()
        .max(maxTimeout)
        .optional()
        .describe(`Seconds before the command is killed and the shell restarted (default ${defaultTimeout}).`),
    }),
    // The shell stops itself (and says so) before the driver's own limit.
    timeoutMs: (maxTimeout + 15) * 1000,
    open: async (scope) => {
      const sandbox = sandboxFor(scope, options.sandboxProvider);
      if (sandbox) return new RunShell(async () => ok(await startSandboxShell(await sandbox())), maxChars);
      const dir = workspaceOf(configured, scope);
      await mkdir(dir, { recursive: true });
      const workspace = await realpath(dir);
      const start = async (): Promise<Result<SandboxProcess, string>> => {
        const chosen = await isolation();
        if (!chosen.isOk()) return err(chosen.error);
        // A command may have removed the workspace itself: the new shell gets it back.
        await mkdir(workspace, { recursive: true });
        return ok(await startHostShell(chosen.value, workspace));
      };
      return new RunShell(start, maxChars);
    },
    close: (shell) => shell.close(),
    execute: ({ command, restart, timeout }, scope, shell) => {
      if (command.includes('\0'))
        return err('The command contains a NUL character, which bash cannot take; nothing was run.');
      if (command.trim() === '' && !restart) {
        return err(
          'No command given: pass the bash command to run in `command` (or `restart: true` for a fresh shell).',
        );
      }
      const seconds = timeout ?? defaultTimeout;
      return shell.serial(async () => {
        const notes: string[] = [];
        if (restart) {
          await shell.stop();
          notes.push(`The shell was restarted: a fresh one in the workspace (${RESET}).`);
          if (command.trim() === '') {
            const started = await shell.current();
            return started.isOk() ? ok(notes.join('\n')) : err(`bash: ${started.error}`);
          }
        }
        const ran = await shell.run(command, { timeoutMs: seconds * 1000, signal: scope.signal });
        if (!ran.isOk()) return err(`bash: ${ran.error}`);
        const { result, replaced } = ran.value;
        if (replaced) {
          notes.push(
            `[The shell had ended (${describeExit(replaced)}) since the last command; this command ran in a new shell in the workspace: ${RESET}.]`,
          );
        }
        const output = shown(result);
        switch (result.end.kind) {
          case 'exited':
            return ok([...notes, ...output, `[exit code ${result.end.exitCode}]`].join('\n'));
          case 'shellExited':
            await shell.stop();
            return ok(
              [
                ...notes,
                ...output,
                `[The shell itself exited (${describeExit(result.end.exit)}) during this command. The next command starts a new shell in the workspace: ${RESET}.]`,
              ].join('\n'),
            );
          case 'timedOut': {
            await shell.stop();
            const restarted = await shell.current();
            const after = restarted.isOk()
              ? `The shell was restarted: a new one in the workspace is ready (${RESET}).`
              : `A new shell could not be started: ${restarted.error}`;
            return err(
              [
                `The command timed out after ${seconds} seconds and was killed, with every process it started. ${after}`,
                ...notes,
                ...output,
              ].join('\n'),
            );
          }
          case 'interrupted': {
            const how = result.end.shellKilled
              ? `the shell did not stop it in time and was killed; the next command starts a new shell in the workspace (${RESET}).`
              : 'the shell is still running, with its working directory and variables.';
            if (result.end.shellKilled) await shell.stop();
            return err(
              [`The command was interrupted (SIGINT) before it finished; ${how}`, ...notes, ...output].join('\n'),
            );
          }
        }
      });
    },
  });
}
