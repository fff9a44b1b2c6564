// Placeholder until the embedding example lands: the agent every server mounts.
export const AGENT_NAME = 'embedded';
