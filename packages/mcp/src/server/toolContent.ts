import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { JsonSchema, ToolSpec } from '@openmanus/core';
import type { ToolEvent } from '@openmanus/core/internal';

let ajv: AjvJsonSchemaValidator | undefined;
const validators = new WeakMap<JsonSchema, JsonSchemaValidator<unknown> | undefined>();

/** What is wrong with a structured result for `schema`, if anything (a schema Ajv cannot compile checks nothing). */
function mismatch(schema: JsonSchema, structured: { readonly [key: string]: unknown }): string | undefined {
  if (!validators.has(schema)) {
    ajv ??= new AjvJsonSchemaValidator();
    let validator: JsonSchemaValidator<unknown> | undefined;
    try {
      validator = ajv.getValidator(schema as JsonSchemaType);
    } catch {
      validator = undefined;
    }
    validators.set(schema, validator);
  }
  const checked = validators.get(schema)?.(structured);
  return checked && !checked.valid ? checked.errorMessage : undefined;
}

const failure = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/**
 * A tool call's outcome as MCP content: the tool's own content parts when it gave them (text,
 * images, audio, embedded resources, links), else the observation as text and its image; its
 * structured result as `structuredContent`; a failure — bad arguments, a timeout, an error — as an
 * `isError` result, so the client's model reads what went wrong instead of a protocol error. A tool
 * with an output schema must give a structured result that matches it (MCP says so, and the SDK's
 * client refuses any other): one that does not is a failure too, as the SDK's own servers answer it.
 */
export function toCallToolResult(event: ToolEvent, spec: Pick<ToolSpec, 'name' | 'outputSchema'>): CallToolResult {
  if (event.type === 'toolSuspended') {
    return failure('Error: this tool waits for a person to answer, which no one can do through MCP.');
  }
  const { output, image, content, structured, isError } = event;
  if (spec.outputSchema && !isError) {
    if (!structured) return failure(`Error: ${spec.name} has an output schema but gave no structured result.`);
    const problem = mismatch(spec.outputSchema, structured);
    if (problem) return failure(`Error: ${spec.name}'s structured result does not match its output schema: ${problem}`);
  }
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
