import { A2A_PROTOCOL_VERSION, type AgentCard, type AgentSkill } from '@a2a-js/sdk';
import type { Agent } from '@openmanus/core';

/** A skill on the agent card; by default there is one per tool of the agent. */
export interface A2aSkill {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly tags?: readonly string[];
  readonly examples?: readonly string[];
}

/** What the agent card says about the agent, besides what the server knows. */
export interface CardOptions {
  /** Default the agent's name. */
  readonly name?: string;
  /** Default the agent's description. */
  readonly description?: string;
  /** The agent's version (default 1.0.0). */
  readonly version?: string;
  /** Default one skill per tool of the agent (but the terminal ones). */
  readonly skills?: readonly A2aSkill[];
  /** Who provides the agent. */
  readonly provider?: { readonly organization: string; readonly url: string };
}

/** The paths of the two transports served, under the server's URL. */
export const JSON_RPC_PATH = '/a2a/jsonrpc';
export const REST_PATH = '/a2a/rest';

const skillOf = (skill: A2aSkill): AgentSkill => ({
  id: skill.id,
  name: skill.name,
  description: skill.description,
  tags: [...(skill.tags ?? [])],
  examples: [...(skill.examples ?? [])],
  inputModes: [],
  outputModes: [],
  securityRequirements: [],
});

/** What the server does beyond the basics, as the card's capabilities say. */
export interface CardCapabilities {
  /** Task updates posted to the webhooks clients register. */
  readonly pushNotifications?: boolean;
}

/** The agent card of `agent` served at `url` (no trailing slash). */
export function agentCard(
  agent: Agent,
  url: string,
  options: CardOptions = {},
  { pushNotifications = false }: CardCapabilities = {},
): AgentCard {
  const skills =
    options.skills ??
    agent.config.tools
      .filter((tool) => !tool.terminal)
      .map((tool) => ({ id: tool.name, name: tool.name, description: tool.description, tags: ['tool'] }));
  const transport = (path: string, protocolBinding: string) => ({
    url: `${url}${path}`,
    protocolBinding,
    tenant: '',
    protocolVersion: A2A_PROTOCOL_VERSION,
  });
  return {
    name: options.name ?? agent.config.name,
    description: options.description ?? agent.config.description ?? '',
    supportedInterfaces: [transport(JSON_RPC_PATH, 'JSONRPC'), transport(REST_PATH, 'HTTP+JSON')],
    provider: options.provider ? { ...options.provider } : undefined,
    version: options.version ?? '1.0.0',
    capabilities: { streaming: true, pushNotifications, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { scheme: 'Bearer', description: "The server's token", bearerFormat: '' },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: skills.map(skillOf),
    signatures: [],
  };
}
