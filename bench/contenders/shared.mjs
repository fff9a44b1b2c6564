// The one tool every contender gets: add two numbers, optionally after a delay (a slow tool).
export const addTool = { name: 'add', description: 'Add two numbers' };
export const makeAdd =
  (toolDelayMs) =>
  async ({ a, b }) => {
    if (toolDelayMs) await new Promise((r) => setTimeout(r, toolDelayMs));
    return String(a + b);
  };

/**
 * Where a streaming contender hands the reply's pieces as they arrive (text and tool-call
 * argument pieces), as a host showing them would: every contender does the same work per piece.
 */
export const shown = { pieces: 0 };
export const show = (piece) => {
  if (piece) shown.pieces++;
};
