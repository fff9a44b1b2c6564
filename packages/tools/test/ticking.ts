/**
 * Runs `work` while an interval ticks in this thread: gives its outcome and how many times the
 * interval ran before it settled. Work that blocks the event loop lets no tick run meanwhile.
 */
export async function whileTicking<T>(work: () => Promise<T>): Promise<{ readonly value: T; readonly ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
  }, 10);
  try {
    const value = await work();
    return { value, ticks };
  } finally {
    clearInterval(timer);
  }
}
