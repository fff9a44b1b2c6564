/**
 * Resolves once `check` holds, checking every 20 ms, for what shows only in /proc, on disk or
 * in a counter (no event to await). The limit is a backstop for a hang, never a speed budget.
 */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
