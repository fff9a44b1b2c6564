import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ok } from '../src/result.js';
import { taskParameters } from '../src/shell/agentTool.js';
import { askHuman, askHumanParameters } from '../src/tools/askHuman.js';
import { defineTool } from '../src/tools/defineTool.js';
import { lazySchema } from '../src/tools/lazySchema.js';
import { pythonParameters } from '../src/tools/pythonExecute.js';
import { strReplaceEditorParameters } from '../src/tools/strReplaceEditor.js';
import { terminate, terminateParameters } from '../src/tools/terminate.js';

// The built-in tools' JSON Schemas are written out so that importing the package does not load
// zod: each must say exactly what zod itself derives from the schema that validates the calls.
const derived = (schema: z.ZodType) => {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input' });
  return json;
};

describe('lazy tool schemas', () => {
  it.each([
    ['ask_human', askHumanParameters],
    ['terminate', terminateParameters],
    ['python_execute', pythonParameters(5, 60)],
    ['python_execute (other limits)', pythonParameters(3, 10)],
    ['agent tool', taskParameters('The task for Researcher.')],
    ['str_replace_editor', strReplaceEditorParameters],
  ])('%s: the written-out JSON Schema is the one zod derives', (_name, schema) => {
    expect(schema.toJSONSchema()).toEqual(derived(schema));
  });

  it('defining a tool on a lazy schema builds nothing: zod is loaded by the first call it validates', () => {
    const build = vi.fn((zod: typeof z) => zod.object({ n: zod.number() }));
    const tool = defineTool({
      name: 'count',
      description: 'Counts.',
      parameters: lazySchema({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }, build),
      execute: ({ n }) => String(n),
    });
    expect(tool.spec.parameters).toEqual({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] });
    expect(build).not.toHaveBeenCalled();
    expect(tool.parse({ n: 'one' }).isOk()).toBe(false);
    expect(tool.parse({ n: 1 })).toEqual(ok({ n: 1 }));
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('validates with zod on the first call, with zod’s own messages', () => {
    expect(terminate.parse({ status: 'success' })).toEqual(ok({ status: 'success' }));
    const failed = terminate.parse({ status: 'maybe' });
    expect(failed.isOk()).toBe(false);
    expect(!failed.isOk() && failed.error).toMatch(
      /Invalid option: expected one of "success"\|"failure"\n {2}→ at status/,
    );
    expect(askHuman.parse({}).isOk()).toBe(false);
    expect(askHuman.spec.parameters).toEqual(askHumanParameters.toJSONSchema());
  });
});
