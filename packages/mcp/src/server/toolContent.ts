import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolEvent } from '@openmanus/core/internal';

/**
 * A tool call's outcome as MCP content: the tool's own content parts when it gave them (text,
 * images, audio, embedded resources, links), else the observation as text and its image; its
 * structured result as `structuredContent`; a failure — bad arguments, a timeout, an error — as an
 * `isError` result, so the client's model reads what went wrong instead of a protocol error.
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
  const { output, image, content, structured, isError } = event;
  return {
    content: content
      ? content.map((part) => ({ ...part }))
      : [
          // A tool that answered with an image alone gets no empty text part beside it.
          ...(output !== '' || !image ? [{ type: 'text' as const, text: output }] : []),
          ...(image ? [{ type: 'image' as const, data: image.base64, mimeType: image.mimeType }] : []),
        ],
    ...(structured ? { structuredContent: { ...structured } } : {}),
    ...(isError ? { isError: true } : {}),
  };
}
