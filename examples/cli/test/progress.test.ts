// What a run prints in process (createProgress, from its run items) and what `openmanus enqueue`
// prints of the same run followed from its events (runEventLines): the same lines for the same things.
import { stripVTControlCharacters } from 'node:util';
import { createAgent, createRunEmitter, defaultPolicies, defineTool, type RunItem, run } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import type { RunEventItem } from '@openmanus/durable';
import { expect, it } from 'vitest';
import { createProgress, runLines } from '../src/progress.js';
import { runEventLines } from '../src/runEventLines.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a city up.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: ({ city }: { city: string }) => {
    if (city !== 'Kyoto') throw new Error(`no data on ${city}`);
    return 'Kyoto: 1.46 million people';
  },
});

it('a run in process and the same run read from its events print the same lines', async () => {
  for (const color of [false, true]) {
    const printed: string[] = [];
    const progress = createProgress({ write: (line) => printed.push(line), color, now: () => 0 });
    const events: RunEventItem[] = [];
    const emitter = createRunEmitter();
    for (const type of ['observation', 'effect', 'event', 'result'] as const) emitter.on(type, progress);
    emitter.on('event', (item: Extract<RunItem, { type: 'event' }>) => {
      const { status, step, usage } = item.state;
      events.push({ event: item.event, status, step, usage });
    });
    const outcome = await run(
      createAgent({ name: 'census', tools: [lookup], policies: defaultPolicies({ maxSteps: 5 }) }),
      'How many in Kyoto?',
      {
        emitter,
        llm: scriptedLlm([
          {
            content: 'Looking both up.',
            toolCalls: [
              { name: 'lookup', arguments: { city: 'Atlantis' } },
              { name: 'lookup', arguments: { city: 'Kyoto' } },
            ],
            usage: { inputTokens: 100, outputTokens: 20 },
          },
          { content: 'About 1.46 million.', usage: { inputTokens: 150, outputTokens: 10 } },
        ]),
      },
    );
    expect(outcome.answer).toBe('About 1.46 million.');

    const lines = runLines(color);
    const followed = events.flatMap((item) => runEventLines(item, color));
    const steps = (heading: RegExp) => (line: string) => heading.test(stripVTControlCharacters(line));
    // The headings say what each knows: the limit and the time in process, the tokens after the reply when followed.
    // Nothing spent before the first call; the scripted model has no price.
    expect(printed.filter(steps(/^Step \d/))).toEqual([
      lines.step('Step 1/5', '0.0s', '0 in · 0 out · $0'),
      lines.step('Step 2/5', '0.0s', '100 in · 20 out · cost unknown'),
    ]);
    expect(followed.filter(steps(/^Step \d/))).toEqual([
      lines.step('Step 1', '100 in · 20 out · cost unknown'),
      lines.step('Step 2', '250 in · 30 out · cost unknown'),
    ]);
    // Between them, the same lines.
    const body = [
      '  Looking both up.',
      lines.toolCall('lookup', 'city: "Atlantis"'),
      lines.toolCall('lookup', 'city: "Kyoto"'),
      lines.toolResult('Error: lookup failed: no data on Atlantis', true),
      lines.toolResult('Kyoto: 1.46 million people'),
      '  About 1.46 million.',
    ];
    expect(followed.filter((line) => !steps(/^Step \d/)(line))).toEqual(body);
    expect(printed.filter((line) => !steps(/^(Step \d|■)/)(line))).toEqual(body);
    expect(printed.at(-1)).toBe(lines.finished(outcome, '0.0s'));
  }
});

it('a jump of the history prints one line, saying what it left out and what it shortened', async () => {
  const printed: string[] = [];
  const progress = createProgress({ write: (line) => printed.push(line), color: false, now: () => 0 });
  const emitter = createRunEmitter();
  emitter.on('observation', progress);
  const ask = { name: 'lookup', arguments: { city: 'Kyoto' } };
  await run(
    createAgent({
      name: 'census',
      tools: [lookup],
      policies: defaultPolicies({ maxSteps: 6 }),
      memory: { maxMessages: 4 },
    }),
    'How many in Kyoto?',
    {
      emitter,
      llm: scriptedLlm([{ toolCalls: [ask] }, { toolCalls: [ask] }, { toolCalls: [ask] }, { content: 'Done.' }]),
    },
  );
  const jumps = printed.map((line) => stripVTControlCharacters(line)).filter((line) => line.includes('history shrunk'));
  expect(jumps.length).toBeGreaterThan(0);
  expect(jumps[0]).toBe('  (history shrunk in one jump: 2 older messages left out)');
});

it('a step of an agent without a step limit is headed with its number alone', () => {
  const printed: string[] = [];
  const progress = createProgress({ write: (line) => printed.push(line), color: false, now: () => 0 });
  progress({ type: 'observation', observation: { kind: 'stepStarted', step: 3 } });
  progress({ type: 'observation', observation: { kind: 'stepStarted', step: 4, maxSteps: 9 } });
  // The heading comes before the notes (time, tokens), two spaces after it.
  expect(printed.map((line) => line.split('  ')[0])).toEqual(['Step 3', 'Step 4/9']);
});
