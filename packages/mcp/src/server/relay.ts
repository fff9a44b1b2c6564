import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ElicitRequestFormParams, SamplingMessageContentBlock, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitationAnswer, SamplingRequest, SamplingResult, ToolRelay } from '@openmanus/core';

/**
 * A tool call's questions sent to the MCP client that made the call: `scope.elicit` as
 * `elicitation/create` (its user answers), `scope.sample` as `sampling/createMessage` (its model
 * answers), related to the call's request (over streamable HTTP, on the call's stream) and
 * cancelled when the call ends. A client that did not declare the capability is not asked: the
 * tool's promise rejects, saying so.
 */
export function clientRelay(server: Server, call: RequestOptions & { readonly signal: AbortSignal }): ToolRelay {
  const unsupported = (what: string, capability: string) =>
    new Error(`The MCP client cannot ${what}: it did not declare the "${capability}" capability.`);
  // Each question has a signal of its own, tied to the call's only while it is open: the SDK sends
  // a cancellation whenever a request's signal aborts, even for a request already answered.
  const asking = async <T>(ask: (options: RequestOptions) => Promise<T>): Promise<T> => {
    const question = new AbortController();
    const stop = () => question.abort(call.signal.reason);
    if (call.signal.aborted) stop();
    else call.signal.addEventListener('abort', stop, { once: true });
    try {
      return await ask({ ...call, signal: question.signal });
    } finally {
      call.signal.removeEventListener('abort', stop);
    }
  };
  return {
    async elicit(request) {
      const asked = server.getClientCapabilities()?.elicitation;
      if (request.mode === 'url') {
        if (!asked?.url) throw unsupported('send its user to a URL (URL-mode elicitation)', 'elicitation.url');
        const { message, url, elicitationId } = request;
        const result = await asking((options) =>
          server.elicitInput({ mode: 'url', message, url, elicitationId }, options),
        );
        // The person agreed to open the URL: there is nothing else to answer.
        return result.action === 'accept' ? { action: 'accept', content: {} } : { action: result.action };
      }
      if (!asked?.form) throw unsupported('ask its user (elicitation)', 'elicitation');
      const result = await asking((options) =>
        server.elicitInput(
          { message: request.message, requestedSchema: request.schema as ElicitRequestFormParams['requestedSchema'] },
          options,
        ),
      );
      return result.action === 'accept'
        ? { action: 'accept', content: (result.content ?? {}) as ElicitationAnswer }
        : { action: result.action };
    },
    async sample(request) {
      const capabilities = server.getClientCapabilities();
      if (!capabilities?.sampling) throw unsupported('ask its model (sampling)', 'sampling');
      const { messages, systemPrompt, maxTokens, temperature, stopSequences, tools, toolChoice } = request;
      const withTools = tools !== undefined || toolChoice !== undefined;
      if (withTools && !capabilities.sampling.tools)
        throw unsupported('let its model call tools (sampling with tools)', 'sampling.tools');
      const params = {
        messages: messages.map(({ role, content }) => ({
          role,
          content: Array.isArray(content) ? content.map(blockOf) : blockOf(content as SamplingBlock),
        })),
        maxTokens,
        ...(systemPrompt !== undefined ? { systemPrompt } : {}),
        ...(temperature !== undefined ? { temperature } : {}),
        ...(stopSequences ? { stopSequences: [...stopSequences] } : {}),
        ...(toolChoice !== undefined ? { toolChoice: { mode: toolChoice } } : {}),
      };
      const result = await asking((options) =>
        tools !== undefined
          ? server.createMessage(
              {
                ...params,
                tools: tools.map(({ name, description, inputSchema }) => ({
                  name,
                  ...(description !== undefined ? { description } : {}),
                  inputSchema: inputSchema as Tool['inputSchema'],
                })),
              },
              options,
            )
          : server.createMessage(params, options),
      );
      // Asked with tools, the client answers with blocks: text, and the calls its model asked for.
      const blocks = Array.isArray(result.content) ? result.content : [result.content];
      const text: string[] = [];
      const toolUse: SamplingToolUse[] = [];
      for (const block of blocks) {
        if (block.type === 'text') text.push(block.text);
        else if (block.type === 'tool_use' && withTools)
          toolUse.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
        else
          throw new Error(
            `The MCP client's model answered with ${block.type} content, where a tool takes text${withTools ? ' and tool calls' : ''}.`,
          );
      }
      return {
        role: 'assistant',
        content: { type: 'text', text: text.join('\n') },
        ...(toolUse.length > 0 ? { toolUse } : {}),
        model: result.model,
        ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}),
      };
    },
  };
}

type SamplingBlock = Exclude<SamplingRequest['messages'][number]['content'], readonly unknown[]>;
type SamplingToolUse = NonNullable<SamplingResult['toolUse']>[number];

/** A block of a tool's sampling message as MCP has it (the same fields; its lists copied, as MCP's are not read-only). */
function blockOf(block: SamplingBlock): SamplingMessageContentBlock {
  switch (block.type) {
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: { ...block.input } };
    case 'tool_result':
      return {
        type: 'tool_result',
        toolUseId: block.toolUseId,
        content: block.content.map((part) => ({ ...part })),
        ...(block.isError !== undefined ? { isError: block.isError } : {}),
      };
    default:
      return { ...block };
  }
}
