// @openmanus/a2a: our agents over Agent2Agent (A2A), on the protocol's official SDK.
export { type A2aSkill, agentCard, type CardCapabilities, type CardOptions } from './card.js';
export { type A2aRunOptions, type A2aServer, type A2aServerOptions, serveA2a } from './server.js';
