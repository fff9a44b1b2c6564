import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolEvent } from '@openmanus/core/internal';

/**
 * A tool call's outcome as MCP content: the observation as text, an image (a screenshot, a
 * chart) as image content, and a failure — bad arguments, a timeout, an error — as an `isError`
 * result, so the client's model reads what went wrong instead of a protocol error.
 */
export function toCallToolResult(event: ToolEvent): CallToolResult {
  if (event.type === 'toolSuspended') {
    return {
      content: [
        { type: 'text', text: 'Error: this tool waits for a person to answer, which no one can do through MCP.' },
      ],
      isError: true,
    };
  }
  return {
    content: [
      { type: 'text', text: event.output },
      ...(event.image ? [{ type: 'image' as const, data: event.image.base64, mimeType: event.image.mimeType }] : []),
    ],
    ...(event.isError ? { isError: true } : {}),
  };
}
