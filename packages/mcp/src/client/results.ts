import type { CallToolResult, ContentBlock, EmbeddedResource } from '@modelcontextprotocol/sdk/types.js';
import { err, type ImageData, type ToolReturn } from '@openmanus/core';

/** How much of an embedded text resource the model sees. */
export const RESOURCE_EXCERPT = 2_000;

/** The image types vision models take; another one in a request would make the model API refuse it. */
const VISION_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * A tool result of an MCP server as our tool's return: text items joined, the first image attached
 * (core sends it to models that take images), other content summarised, and `isError` as an error
 * observation. A result with only structured content shows it as JSON.
 */
export function toToolReturn(result: CallToolResult): ToolReturn {
  const parts: string[] = [];
  let image: ImageData | undefined;
  for (const block of result.content ?? []) {
    if (block.type === 'image' && !image && VISION_TYPES.has(block.mimeType)) {
      image = { base64: block.data, mimeType: block.mimeType };
      parts.push(`[image attached: ${block.mimeType}, ${sizeOf(block.data)}]`);
    } else {
      parts.push(describe(block));
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const output = parts.join('\n');
  // Core says "Error: " itself; a server that said it too (ours does) must not make it "Error: Error: ".
  if (result.isError === true)
    return err(output.replace(/^error:\s*/i, '') || 'the tool reported an error without a message');
  return image ? { output, image } : output;
}

function describe(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return VISION_TYPES.has(block.mimeType)
        ? `[another image (${block.mimeType}, ${sizeOf(block.data)}) not shown: one image per result]`
        : `[image (${block.mimeType}, ${sizeOf(block.data)}) not shown: models take PNG, JPEG, GIF and WebP]`;
    case 'audio':
      return `[audio (${block.mimeType}, ${sizeOf(block.data)}) not shown]`;
    case 'resource':
      return describeResource(block.resource);
    case 'resource_link': {
      const name = block.name !== block.uri ? ` "${block.name}"` : '';
      const type = block.mimeType ? ` (${block.mimeType})` : '';
      return `[resource link: ${block.uri}${name}${type}${block.description ? ` — ${block.description}` : ''}]`;
    }
  }
}

/** An embedded resource: its uri and type, and the start of its text (binary data is only sized). */
function describeResource(resource: EmbeddedResource['resource']): string {
  const type = resource.mimeType ? ` (${resource.mimeType})` : '';
  if ('blob' in resource)
    return `[resource ${resource.uri}${type}: ${sizeOf(resource.blob)} of binary data, not shown]`;
  const { text } = resource;
  const more = text.length - RESOURCE_EXCERPT;
  const excerpt = more > 0 ? `${text.slice(0, RESOURCE_EXCERPT)}\n…[${more} more characters]` : text;
  return `[resource ${resource.uri}${type}]\n${excerpt}`;
}

/** The decoded size of base64 data, for people. */
function sizeOf(base64: string): string {
  const bytes = Math.floor((base64.replace(/=+$/, '').length * 3) / 4);
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KB`;
}
