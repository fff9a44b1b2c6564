import type { Agent } from '@openmanus/core';

export declare const flowAgents: () => { readonly researcher: Agent; readonly writer: Agent };
