import {
  createLlmFromConfig,
  type LlmPort,
  type LlmSettings,
  llmSettingsFor,
  type OpenManusConfig,
} from '@openmanus/core';

/**
 * One model port for agents with different profiles: each request goes to the `[llm.<profile>]`
 * table it names (an agent's own), else to `[llm]` — so that in a flow each executor uses the
 * model `openmanus --agent <name>` would, and the plan and the summary use `[llm]`.
 */
export function createProfiledLlm(config: OpenManusConfig): LlmPort {
  const ports = new Map<LlmSettings, LlmPort>();
  const portFor = (profile: string | undefined): LlmPort => {
    const settings = llmSettingsFor(config, profile);
    const port = ports.get(settings) ?? createLlmFromConfig(config, profile);
    ports.set(settings, port);
    return port;
  };
  return {
    model: config.llm.model,
    complete: (request, options) => portFor(request.profile).complete(request, options),
  };
}
