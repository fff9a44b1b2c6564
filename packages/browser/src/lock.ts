/** Runs tasks one at a time, in the order they were asked for: a failed task does not stop the next. */
export interface Lock {
  run<T>(task: () => Promise<T>): Promise<T>;
}

export function createLock(): Lock {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run<T>(task: () => Promise<T>): Promise<T> {
      const result = tail.then(task);
      tail = result.catch(() => {});
      return result;
    },
  };
}
