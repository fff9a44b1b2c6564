import type * as Zod from 'zod';
import { lazyPromise } from '../lazyModule.js';
import type { SandboxProvider } from '../shell/sandboxPort.js';
import { defineTool } from './defineTool.js';
import { lazySchema } from './lazySchema.js';

export interface StrReplaceEditorOptions {
  readonly workspace: string;
  /**
   * Whose files it edits when the run has no sandbox of its own: this provider's sandbox for the
   * run (shared with the other tools given it, so what Python writes there the editor sees).
   * Without either, the workspace on this host.
   */
  readonly sandboxProvider?: SandboxProvider;
  /** Longest output shown before it is clipped (default 16000, as in OpenManus). */
  readonly maxResponseChars?: number;
}

/** Python's str.expandtabs(8): tabs become spaces up to the next multiple of 8, per line. */
export function expandTabs(text: string): string {
  if (!text.includes('\t')) return text;
  return text
    .split('\n')
    .map((line) => {
      let out = '';
      for (const ch of line) out += ch === '\t' ? ' '.repeat(8 - (out.length % 8)) : ch;
      return out;
    })
    .join('\n');
}

const commands = ['view', 'create', 'str_replace', 'insert', 'undo_edit'] as const;
const help = {
  command: 'The command to run.',
  path: 'Absolute path to a file or directory inside the workspace.',
  file_text: 'Content of the file to create (`create`).',
  old_str: 'The exact text to replace; must occur once (`str_replace`).',
  new_str: 'The replacement (`str_replace`) or the text to insert (`insert`).',
  insert_line: 'Insert after this line; 0 inserts at the top (`insert`).',
  view_range: '[first, last] lines to show, 1-based; last = -1 means to the end (`view`).',
};
// What zod's toJSONSchema({ io: 'input' }) gives for the schema below (zod stays unloaded until a call).
const integer = { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };

/** str_replace_editor's arguments (zod is loaded on the first call, not at import). */
export const strReplaceEditorParameters = lazySchema(
  {
    type: 'object',
    properties: {
      command: { type: 'string', enum: commands, description: help.command },
      path: { type: 'string', description: help.path },
      file_text: { description: help.file_text, type: 'string' },
      old_str: { description: help.old_str, type: 'string' },
      new_str: { description: help.new_str, type: 'string' },
      insert_line: { description: help.insert_line, ...integer },
      view_range: { description: help.view_range, minItems: 2, maxItems: 2, type: 'array', items: integer },
    },
    required: ['command', 'path'],
  },
  (z) =>
    z.object({
      command: z.enum(commands).describe(help.command),
      path: z.string().describe(help.path),
      file_text: z.string().optional().describe(help.file_text),
      old_str: z.string().optional().describe(help.old_str),
      new_str: z.string().optional().describe(help.new_str),
      insert_line: z.number().int().optional().describe(help.insert_line),
      view_range: z.array(z.number().int()).length(2).optional().describe(help.view_range),
    }),
);

/** A call's arguments, as validated. */
export type EditorArgs = Zod.output<typeof strReplaceEditorParameters>;

// The commands themselves load on the first call: a run that never edits never pays for them.
const editorCommands = lazyPromise(() => import('./editorCommands.js'));

/** OpenManus's str_replace_editor, confined to the workspace (the run's sandbox's, when it has one), with no shell anywhere. */
export function createStrReplaceEditor(options: StrReplaceEditorOptions) {
  return defineTool({
    name: 'str_replace_editor',
    description:
      'View, create and edit files in the workspace. `view` shows a file with line numbers (or a directory two levels deep); ' +
      '`create` writes a new file (never overwrites); `str_replace` replaces exactly one occurrence of old_str; ' +
      '`insert` adds new_str after line insert_line (0 = top); `undo_edit` reverts the last edit of a file. Paths must be absolute.',
    parameters: strReplaceEditorParameters,
    execute: async (args, scope) => (await editorCommands()).runEditorCommand(options, args, scope),
  });
}
