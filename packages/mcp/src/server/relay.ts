import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitationAnswer, ToolRelay } from '@openmanus/core';

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
      if (!server.getClientCapabilities()?.elicitation?.form)
        throw unsupported('ask its user (elicitation)', 'elicitation');
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
      if (!server.getClientCapabilities()?.sampling) throw unsupported('ask its model (sampling)', 'sampling');
      const { messages, systemPrompt, maxTokens, temperature, stopSequences } = request;
      const result = await asking((options) =>
        server.createMessage(
          {
            messages: messages.map(({ role, content }) => ({ role, content: { ...content } })),
            maxTokens,
            ...(systemPrompt !== undefined ? { systemPrompt } : {}),
            ...(temperature !== undefined ? { temperature } : {}),
            ...(stopSequences ? { stopSequences: [...stopSequences] } : {}),
          },
          options,
        ),
      );
      if (result.content.type !== 'text') {
        throw new Error(
          `The MCP client's model answered with ${result.content.type} content, where a tool takes text.`,
        );
      }
      return {
        role: 'assistant',
        content: { type: 'text', text: result.content.text },
        model: result.model,
        ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}),
      };
    },
  };
}
