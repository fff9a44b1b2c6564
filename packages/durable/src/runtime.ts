/**
 * What a durable engine gives one run, whatever the engine: work recorded under a key (done
 * once, its result replayed after a crash), durable sleeps and waits, and what observers see.
 * Everything here is called from the run's own body, never from inside a recorded step.
 */
export interface DurableRuntime {
  /** The run's id (the engine's workflow id, or the first one's when the run continued as a fresh one). */
  readonly runId: string;
  /** Aborted when the run is cancelled: work in flight stops, and nothing after it is recorded. */
  readonly cancelled?: AbortSignal;
  /**
   * Runs `work` once and records its result under `key`; when the run is replayed after a crash,
   * the recorded result comes back without running `work` again. Work that was running when the
   * process died runs again (at least once), so it must be idempotent on its key.
   */
  runStep<T>(key: string, work: () => Promise<T>): Promise<T>;
  /** A message sent to this run on `topic`, or `null` after `timeoutMs`. */
  waitForSignal<T>(topic: string, timeoutMs: number): Promise<T | null>;
  /** Sets the latest value of `key` for observers (a status snapshot). */
  publish(key: string, value: unknown): Promise<void>;
  /** Appends `value` to the stream `key` for observers (progress items). */
  stream(key: string, value: unknown): Promise<void>;
}
