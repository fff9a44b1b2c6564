import { createAgent, defaultPolicies, defineTool } from '@openmanus/core';
import { z } from 'zod';

const populations: Record<string, number> = { kyoto: 1_463_723, osaka: 2_752_412, nara: 367_353 };

export const lookupPopulation = defineTool({
  name: 'lookup_population',
  description: 'Population of a Japanese city (2020 census).',
  parameters: z.object({ city: z.string().describe('City name, e.g. "Kyoto"') }),
  parallelSafe: true,
  execute: ({ city }) => {
    const population = populations[city.trim().toLowerCase()];
    return population === undefined ? `No data for ${city}.` : `${city}: ${population}`;
  },
});

export const cityAgent = createAgent({
  name: 'cities',
  systemPrompt: 'You answer questions about Japanese cities. Look numbers up with lookup_population; never guess.',
  tools: [lookupPopulation],
  policies: defaultPolicies({ maxSteps: 5 }),
});
