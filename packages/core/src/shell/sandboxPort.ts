/**
 * The sandbox port: where a run's tools execute. One sandbox per run, opened when a tool first
 * needs it and closed when the run ends (a per-run resource of the run scope). Providers —
 * the host (optionally under bubblewrap), Docker, a remote service — implement it; with none
 * configured, tools run on the host as they always have.
 */

/** How one command ended. Output is capped by the caller's `maxOutputBytes`; what was cut is counted. */
export interface ExecResult {
  /** The exit code, or `null` when a signal or the timeout ended it (or it could not start: `stderr` says why). */
  readonly exitCode: number | null;
  /** The signal that ended it, by name (`SIGKILL`), when one did. */
  readonly signal?: string;
  readonly stdout: string;
  readonly stderr: string;
  /** The command ran out of time (and everything it started was killed). */
  readonly timedOut: boolean;
  /** Bytes of output not kept, stdout and stderr together. */
  readonly droppedBytes: number;
}

export interface ExecOptions {
  /** The working directory inside the sandbox (default: its workspace). */
  readonly cwd?: string;
  /** Given on the command's stdin, then closed. */
  readonly stdin?: string | Uint8Array;
  /** Variables besides the sandbox's own clean environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** After this long the command and everything it started are killed. */
  readonly timeoutMs?: number;
  /** Aborting kills the command and everything it started. */
  readonly signal?: AbortSignal;
  /** Most bytes of stdout and of stderr each kept (default 1 MiB). */
  readonly maxOutputBytes?: number;
}

/** A long-lived process in the sandbox (a shell): its streams, and a way to end it with everything it started. */
export interface SandboxProcess {
  write(data: string | Uint8Array): void;
  onStdout(listener: (chunk: Uint8Array) => void): void;
  onStderr(listener: (chunk: Uint8Array) => void): void;
  /** Called once the process has ended and its output has arrived: its exit code, or the signal that ended it. */
  onExit(listener: (exitCode: number | null, signal?: string) => void): void;
  /** Interrupts what runs in the foreground (as Ctrl-C would), keeping the process. */
  interrupt(): void;
  /**
   * Kills (SIGKILL) what the last input started and still runs, sparing the process itself and
   * what earlier input left running (a shell's background jobs). Without it, a command that
   * ignores the interrupt can only be stopped by killing the whole process.
   */
  killForeground?(): void;
  /**
   * Tells the provider that what the last input started has finished (a shell's command ended),
   * for work it does between commands: the local provider takes setuid bits off files the command
   * left in the workspace (they would run as the host's user outside the sandbox).
   */
  settle?(): Promise<void>;
  /** Ends the process and everything it started. */
  kill(): Promise<void>;
}

export interface DirectoryEntry {
  readonly name: string;
  readonly type: 'file' | 'directory' | 'symlink' | 'other';
  readonly size: number;
}

/** A link from outside to a port the sandbox serves (a remote sandbox's website). */
export interface PreviewLink {
  readonly url: string;
  /** Sent as a header by whoever opens the link, when the sandbox is private (empty when public). */
  readonly token: string;
}

/** One run's sandbox. Paths are the sandbox's own (absolute, or relative to `workspace`). */
export interface Sandbox {
  /** The provider that made it (`local`, `bwrap`, `docker`, `daytona`, …). */
  readonly provider: string;
  /** The workspace directory as code inside the sandbox sees it. */
  readonly workspace: string;
  exec(command: readonly string[], options?: ExecOptions): Promise<ExecResult>;
  spawn(command: readonly string[], options?: Pick<ExecOptions, 'cwd' | 'env'>): Promise<SandboxProcess>;
  /**
   * The file's bytes; with `maxBytes`, the read itself stops there (a longer file comes back cut
   * at `maxBytes`, whatever its size was a moment before): code in the sandbox can grow a file
   * between a listing and the read.
   */
  readFile(path: string, options?: { readonly maxBytes?: number }): Promise<Uint8Array>;
  /** Creates or replaces the file (and the directories it needs). */
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  list(path: string): Promise<readonly DirectoryEntry[]>;
  remove(path: string): Promise<void>;
  /** Copies a host file or directory into the sandbox, and back out. */
  copyIn(hostPath: string, sandboxPath: string): Promise<void>;
  copyOut(sandboxPath: string, hostPath: string): Promise<void>;
  /**
   * The link from outside to what listens on `port` inside, for sandboxes reachable only through
   * their provider (a remote service); absent where the host reaches the sandbox directly.
   */
  previewUrl?(port: number): Promise<PreviewLink>;
  /** Removes the sandbox and everything running in it. */
  close(): Promise<void>;
}

/** What a provider is told about the run it makes a sandbox for. */
export interface SandboxRequest {
  readonly runId: string;
  /** The host workspace of the run, if it has one (bound into the sandbox by providers that can). */
  readonly workspace?: string;
  readonly signal: AbortSignal;
}

/** Makes sandboxes: one per run, on first use. */
export interface SandboxProvider {
  readonly name: string;
  create(request: SandboxRequest): Promise<Sandbox>;
}
