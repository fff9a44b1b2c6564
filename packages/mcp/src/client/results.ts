import type { CallToolResult, ContentBlock, EmbeddedResource } from '@modelcontextprotocol/sdk/types.js';
import { err, type ImageData, type ToolContent, type ToolReturn } from '@openmanus/core';
import { type JsonLimits, jsonExcess } from './jsonBounds.js';
import { mcpContent } from './untrusted.js';

/** How much of an embedded text resource the model sees. */
export const RESOURCE_EXCERPT = 2_000;
/** The most text of one result we pass on (core cuts it further to the agent's `maxObserve`). */
export const MAX_RESULT_CHARS = 200_000;
/** Structured content shown as JSON only within these bounds (JSON.stringify throws on deep values). */
export const MAX_STRUCTURED: JsonLimits = { depth: 64, chars: MAX_RESULT_CHARS };
/** The largest image we attach, decoded (each later request of the run carries it again). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** The image types vision models take; another one in a request would make the model API refuse it. */
export const VISION_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * A tool result of `server` as our tool's return: text items joined, the first image attached
 * (core sends it to models that take images), other content summarised, and `isError` as an error
 * observation. A result with only structured content shows it as JSON. What the model reads of it,
 * an error's message too, is the server's: it comes in a block marked untrusted (see `mcpContent`).
 */
export function toToolReturn(result: CallToolResult, server: string): ToolReturn {
  const parts: string[] = [];
  let image: ImageData | undefined;
  for (const block of result.content ?? []) {
    if (
      block.type === 'image' &&
      !image &&
      VISION_TYPES.has(block.mimeType) &&
      bytesOf(block.data) <= MAX_IMAGE_BYTES
    ) {
      image = { base64: block.data, mimeType: block.mimeType };
      parts.push(`[image attached: ${block.mimeType}, ${sizeOf(block.data)}]`);
    } else {
      parts.push(describe(block));
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(describeStructured(result.structuredContent));
  const text = clip(parts.join('\n'));
  // Core says "Error: " itself; a server that said it too (ours does) must not make it "Error: Error: ".
  if (result.isError === true) {
    const message = text.replace(/^error:\s*/i, '');
    return err(message ? mcpContent(server, message) : 'the tool reported an error without a message');
  }
  // Nothing said is nothing to mark (an empty block would only read as an odd answer).
  const output = text === '' ? '' : mcpContent(server, text);
  // Parts the model only reads about (audio, files, links) are kept as they are, so that our MCP
  // server serving this tool passes them on; the model reads `output`.
  const blocks = result.content ?? [];
  const keep = blocks.some(
    (block) => block.type === 'audio' || block.type === 'resource' || block.type === 'resource_link',
  );
  const content = keep ? blocks.map(toolContentOf) : undefined;
  if (!image && !content) return output;
  return { output, ...(image ? { image } : {}), ...(content ? { content } : {}) };
}

/** A content block as core keeps it: its protocol fields only (no annotations, icons or `_meta`). */
function toolContentOf(block: ContentBlock): ToolContent {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
    case 'audio':
      return { type: block.type, data: block.data, mimeType: block.mimeType };
    case 'resource': {
      const { uri, mimeType } = block.resource;
      const type = typeof mimeType === 'string' ? { mimeType } : {};
      return 'blob' in block.resource && typeof block.resource.blob === 'string'
        ? { type: 'resource', resource: { uri, ...type, blob: block.resource.blob } }
        : {
            type: 'resource',
            resource: { uri, ...type, text: String((block.resource as { text?: unknown }).text ?? '') },
          };
    }
    case 'resource_link': {
      const { uri, name, title, description, mimeType } = block;
      return {
        type: 'resource_link',
        uri,
        name,
        ...(title !== undefined ? { title } : {}),
        ...(description !== undefined ? { description } : {}),
        ...(mimeType !== undefined ? { mimeType } : {}),
      };
    }
  }
}

/** One content block as the model reads it (an image as a note: only `toToolReturn` attaches one). */
export function describe(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      if (!VISION_TYPES.has(block.mimeType))
        return `[image (${block.mimeType}, ${sizeOf(block.data)}) not shown: models take PNG, JPEG, GIF and WebP]`;
      return bytesOf(block.data) > MAX_IMAGE_BYTES
        ? `[image (${block.mimeType}, ${sizeOf(block.data)}) not shown: over the ${sizeOf(MAX_IMAGE_BYTES)} an image may have]`
        : `[another image (${block.mimeType}, ${sizeOf(block.data)}) not shown: one image per result]`;
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
export function describeResource(resource: EmbeddedResource['resource']): string {
  const type = resource.mimeType ? ` (${resource.mimeType})` : '';
  if ('blob' in resource)
    return `[resource ${resource.uri}${type}: ${sizeOf(resource.blob)} of binary data, not shown]`;
  const { text } = resource;
  const more = text.length - RESOURCE_EXCERPT;
  const excerpt = more > 0 ? `${text.slice(0, RESOURCE_EXCERPT)}\n…[${more} more characters]` : text;
  return `[resource ${resource.uri}${type}]\n${excerpt}`;
}

/** Structured content as JSON, unless it is too deep or too long to write out. */
function describeStructured(content: Record<string, unknown>): string {
  const excess = jsonExcess(content, MAX_STRUCTURED);
  if (excess === 'depth') return `[structured content not shown: nested more than ${MAX_STRUCTURED.depth} levels deep]`;
  if (excess === 'size') return `[structured content not shown: longer than ${MAX_STRUCTURED.chars} characters]`;
  return JSON.stringify(content);
}

/** `text`, cut to what a result may carry. */
export function clip(text: string): string {
  const more = text.length - MAX_RESULT_CHARS;
  return more > 0 ? `${text.slice(0, MAX_RESULT_CHARS)}\n…[${more} more characters of the result not shown]` : text;
}

/** The decoded size of base64 data (its padding, at most two `=`, counted at the end only: no regex over it). */
export function bytesOf(base64: string): number {
  let end = base64.length;
  while (end > 0 && base64.length - end < 2 && base64[end - 1] === '=') end--;
  return Math.floor((end * 3) / 4);
}

/** A size, for people: base64 data decoded, or a count of bytes. */
export function sizeOf(data: string | number): string {
  const bytes = typeof data === 'number' ? data : bytesOf(data);
  if (bytes < 1024) return `${bytes} bytes`;
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
