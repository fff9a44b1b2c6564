import type { LlmPort } from '@openmanus/core';
import type { WorkerAgent } from '@openmanus/durable';

export function testAgents(options: {
  toolLog: string;
  llm: LlmPort;
  workerId?: string;
  continueEvery?: number;
}): Record<
  'recorder' | 'asker' | 'launcher' | 'holder' | 'guarded' | 'booker' | 'answeredBooker' | 'delegator' | 'reserver',
  WorkerAgent
>;
