import { describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import { err, ok } from '../src/result.js';
import { run } from '../src/shell/run.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { defineTool } from '../src/tools/defineTool.js';

const addSchema = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
};

describe('a tool defined with a plain JSON Schema (no zod)', () => {
  it('sends the schema as given and runs with the arguments the model sent', async () => {
    const add = defineTool<{ a: number; b: number }>({
      name: 'add',
      description: 'Add two numbers',
      parameters: addSchema,
      parallelSafe: true,
      execute: ({ a, b }) => String(a + b),
    });
    expect(add.spec).toEqual({
      name: 'add',
      description: 'Add two numbers',
      parameters: addSchema,
      parallelSafe: true,
    });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { content: 'five' }]);
    await run(createAgent({ name: 'a', tools: [add] }), 'add', { llm });
    expect(llm.requests[0]?.tools[0]?.parameters).toEqual(addSchema);
    expect(llm.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toBe('5');
  });

  it('checks the arguments with its own validate, whose error the model sees', async () => {
    const add = defineTool<{ a: number; b: number }>({
      name: 'add',
      description: 'Add two numbers',
      parameters: addSchema,
      validate: (args) => {
        const { a, b } = args as { a?: unknown; b?: unknown };
        return typeof a === 'number' && typeof b === 'number' ? ok({ a, b }) : err('a and b must be numbers');
      },
      execute: ({ a, b }) => String(a + b),
    });
    expect(add.parse({ a: 1, b: 2 })).toEqual(ok({ a: 1, b: 2 }));
    const llm = scriptedLlm([{ toolCalls: [{ name: 'add', arguments: { a: 'x' } }] }, { content: 'sorry' }]);
    await run(createAgent({ name: 'a', tools: [add] }), 'add', { llm });
    expect(llm.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toBe(
      'Error: invalid arguments for add:\na and b must be numbers',
    );
  });
});
