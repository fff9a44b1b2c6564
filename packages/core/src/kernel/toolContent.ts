/**
 * A tool result's parts as MCP carries them: what a tool served over MCP gives its client, and what
 * a remote MCP tool gave us. The model reads the call's `output` text (and its image); these parts
 * go to clients that take more (audio, embedded files, links).
 */
export type ToolContent =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly data: string; readonly mimeType: string }
  | { readonly type: 'audio'; readonly data: string; readonly mimeType: string }
  | { readonly type: 'resource'; readonly resource: EmbeddedResource }
  | {
      readonly type: 'resource_link';
      readonly uri: string;
      readonly name: string;
      readonly title?: string;
      readonly description?: string;
      readonly mimeType?: string;
    };

/** A file's contents inside a result: text, or binary as base64 (`blob`). */
export type EmbeddedResource =
  | { readonly uri: string; readonly mimeType?: string; readonly text: string }
  | { readonly uri: string; readonly mimeType?: string; readonly blob: string };
