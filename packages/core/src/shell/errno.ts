/** The `code` of a Node.js system error (`ENOENT`, `EEXIST`…), if it has one. */
export const codeOf = (error: unknown): unknown => (error as NodeJS.ErrnoException | undefined)?.code;

/** A catch handler that turns the error with `code` into undefined and rethrows any other. */
export const ignoreCode =
  (code: string) =>
  (error: unknown): undefined => {
    if (codeOf(error) !== code) throw error;
    return undefined;
  };
