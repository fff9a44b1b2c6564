// The one tool every contender gets: add two numbers, optionally after a delay (a slow tool).
export const addTool = { name: 'add', description: 'Add two numbers' };
export const makeAdd =
  (toolDelayMs) =>
  async ({ a, b }) => {
    if (toolDelayMs) await new Promise((r) => setTimeout(r, toolDelayMs));
    return String(a + b);
  };
