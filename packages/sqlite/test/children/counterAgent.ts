import { appendFile } from 'node:fs/promises';
import { type Agent, createAgent, defineTool } from '@openmanus/core';

export interface CounterOptions {
  /** Each call is saved as started before it runs, and not run again if a crash cut it short. */
  readonly atMostOnce?: boolean;
  /** Called while a call runs, after its effect (the line) is written. */
  readonly whileRunning?: (name: string) => Promise<void>;
}

/** An agent whose one tool, `bump`, appends the name it is given to `log`: a line per time a call ran. */
export function counterAgent(log: string, options: CounterOptions = {}): Agent {
  const bump = defineTool<{ name: string }>({
    name: 'bump',
    description: 'Counts one bump of a name',
    parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    ...(options.atMostOnce ? { atMostOnce: true } : {}),
    execute: async ({ name }) => {
      await appendFile(log, `${name}\n`);
      await options.whileRunning?.(name);
      return `bumped ${name}`;
    },
  });
  return createAgent({ name: 'counter', tools: [bump], tokenizer: 'estimate' });
}
