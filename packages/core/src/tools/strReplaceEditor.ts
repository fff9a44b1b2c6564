import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { err, ok } from '../result.js';
import { defineTool } from './defineTool.js';
import { confine, WorkspaceError } from './workspace.js';

export interface StrReplaceEditorOptions {
  readonly workspace: string;
  /** Longest output shown before it is clipped (default 16000, as in OpenManus). */
  readonly maxResponseChars?: number;
}

const SNIPPET_LINES = 4;
// Files are read whole; anything bigger is for python_execute, not for the model's context.
const MAX_FILE_BYTES = 10 * 1024 * 1024;
const CLIPPED =
  '<response clipped><NOTE>To save on context only part of this file has been shown to you. ' +
  'Use view_range, or search the file with python_execute, to see the rest.</NOTE>';

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

/** `cat -n` of some text, numbered from `firstLine`, clipped at `max` characters. */
function numbered(text: string, label: string, max: number, firstLine = 1): string {
  const clipped = text.length > max ? `${text.slice(0, max)}${CLIPPED}` : text;
  const lines = expandTabs(clipped)
    .split('\n')
    .map((line, i) => `${String(i + firstLine).padStart(6)}\t${line}`);
  return `Here's the result of running \`cat -n\` on ${label}:\n${lines.join('\n')}\n`;
}

async function listTwoLevels(dir: string): Promise<string[]> {
  const out: string[] = [dir];
  const walk = async (current: string, depth: number) => {
    const entries = (await readdir(current, { withFileTypes: true })).filter((e) => !e.name.startsWith('.'));
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const full = join(current, entry.name);
      out.push(full);
      if (entry.isDirectory() && depth < 2) await walk(full, depth + 1);
    }
  };
  await walk(dir, 1);
  return out;
}

type Edit = { readonly kind: 'created' } | { readonly kind: 'edited'; readonly previous: string };
/** Undo history of one run, by file: kept in the run's state (per run, and it survives a resume). */
type UndoHistory = Readonly<Record<string, readonly Edit[]>>;

// Bounded so a long run's state does not grow with every edit of a large file.
const MAX_UNDO_PER_FILE = 10;
const MAX_UNDO_CHARS = 2_000_000;

const sizeOf = (edits: readonly Edit[]) => edits.reduce((n, e) => n + (e.kind === 'edited' ? e.previous.length : 0), 0);

/**
 * The history with one more edit, the oldest edits dropped past the bounds (other files' first).
 * An edit whose previous content alone is over the bound is not kept, and neither are the
 * file's older ones: an undo must never skip an edit. `kept` says whether it can be undone.
 */
function withEdit(history: UndoHistory, path: string, edit: Edit): { history: UndoHistory; kept: boolean } {
  if (sizeOf([edit]) > MAX_UNDO_CHARS) {
    const { [path]: _dropped, ...rest } = history;
    return { history: rest, kept: false };
  }
  const next: Record<string, readonly Edit[]> = {
    ...history,
    [path]: [...(history[path] ?? []), edit].slice(-MAX_UNDO_PER_FILE),
  };
  let total = Object.values(next).reduce((n, edits) => n + sizeOf(edits), 0);
  const others = Object.keys(next).filter((file) => file !== path);
  for (const file of [...others, path]) {
    while (total > MAX_UNDO_CHARS && (next[file]?.length ?? 0) > (file === path ? 1 : 0)) {
      const [oldest, ...rest] = next[file] ?? [];
      total -= oldest ? sizeOf([oldest]) : 0;
      next[file] = rest;
    }
  }
  return { history: next, kept: true };
}

const TOO_LARGE_TO_UNDO = `\n(This edit cannot be undone: the file was too large (over ${MAX_UNDO_CHARS} characters) to keep its previous content.)`;

const required = (name: string, command: string) => `Parameter \`${name}\` is required for command: ${command}`;

/** OpenManus's str_replace_editor, confined to the workspace, with no shell anywhere. */
export function createStrReplaceEditor(options: StrReplaceEditorOptions) {
  const max = options.maxResponseChars ?? 16_000;

  const snippet = (content: string, path: string, aroundLine: number, newLines: number) => {
    const lines = content.split('\n');
    const start = Math.max(0, aroundLine - SNIPPET_LINES);
    const end = Math.min(lines.length, aroundLine + newLines + SNIPPET_LINES);
    return (
      `The file ${path} has been edited. ${numbered(lines.slice(start, end).join('\n'), `a snippet of ${path}`, max, start + 1)}` +
      'Review the changes and make sure they are as expected. Edit the file again if necessary.'
    );
  };

  return defineTool({
    name: 'str_replace_editor',
    description:
      'View, create and edit files in the workspace. `view` shows a file with line numbers (or a directory two levels deep); ' +
      '`create` writes a new file (never overwrites); `str_replace` replaces exactly one occurrence of old_str; ' +
      '`insert` adds new_str after line insert_line (0 = top); `undo_edit` reverts the last edit of a file. Paths must be absolute.',
    parameters: z.object({
      command: z.enum(['view', 'create', 'str_replace', 'insert', 'undo_edit']).describe('The command to run.'),
      path: z.string().describe('Absolute path to a file or directory inside the workspace.'),
      file_text: z.string().optional().describe('Content of the file to create (`create`).'),
      old_str: z.string().optional().describe('The exact text to replace; must occur once (`str_replace`).'),
      new_str: z.string().optional().describe('The replacement (`str_replace`) or the text to insert (`insert`).'),
      insert_line: z.number().int().optional().describe('Insert after this line; 0 inserts at the top (`insert`).'),
      view_range: z
        .array(z.number().int())
        .length(2)
        .optional()
        .describe('[first, last] lines to show, 1-based; last = -1 means to the end (`view`).'),
    }),
    execute: async (args, scope) => {
      const history = (scope.data ?? {}) as UndoHistory;
      /** Records the edit; says so when it cannot be undone. */
      const remember = (path: string, edit: Edit): string => {
        const { history: next, kept } = withEdit(history, path, edit);
        scope.setData(next);
        return kept ? '' : TOO_LARGE_TO_UNDO;
      };
      let path: string;
      try {
        path = await confine(options.workspace, args.path);
      } catch (error) {
        if (error instanceof WorkspaceError) return err(error.message);
        throw error;
      }
      const info = await stat(path).catch(() => undefined);
      if (args.command === 'create') {
        if (info) return err(`File already exists at: ${args.path}. Cannot overwrite files using command \`create\`.`);
        if (args.file_text === undefined) return err(required('file_text', 'create'));
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, args.file_text);
        remember(path, { kind: 'created' });
        return ok(`File created successfully at: ${args.path}`);
      }
      if (!info) return err(`The path ${args.path} does not exist. Please provide a valid path.`);
      if (info.isDirectory()) {
        if (args.command !== 'view') {
          return err(`The path ${args.path} is a directory and only the \`view\` command can be used on directories.`);
        }
        if (args.view_range) return err('The `view_range` parameter is not allowed when `path` points to a directory.');
        const entries = await listTwoLevels(path);
        return ok(
          `Here are the files and directories up to 2 levels deep in ${args.path}, excluding hidden items:\n${entries.join('\n')}\n`,
        );
      }
      if (info.size > MAX_FILE_BYTES) {
        return err(
          `The file ${args.path} is ${(info.size / 1024 / 1024).toFixed(1)} MB, too large for this editor (limit ${MAX_FILE_BYTES / 1024 / 1024} MB). Inspect it with python_execute.`,
        );
      }
      const content = await readFile(path, 'utf8');
      switch (args.command) {
        case 'view': {
          if (!args.view_range) return ok(numbered(content, args.path, max));
          const lines = content.split('\n');
          const [first = 1, last = -1] = args.view_range;
          if (first < 1 || first > lines.length) {
            return err(
              `Invalid \`view_range\`: ${JSON.stringify(args.view_range)}. Its first element \`${first}\` should be within the range of lines of the file: [1, ${lines.length}]`,
            );
          }
          if (last !== -1 && (last < first || last > lines.length)) {
            return err(
              `Invalid \`view_range\`: ${JSON.stringify(args.view_range)}. Its second element \`${last}\` should be -1 or within [${first}, ${lines.length}]`,
            );
          }
          const shown = lines.slice(first - 1, last === -1 ? undefined : last).join('\n');
          return ok(numbered(shown, args.path, max, first));
        }
        case 'str_replace': {
          if (args.old_str === undefined) return err(required('old_str', 'str_replace'));
          const text = expandTabs(content);
          const oldStr = expandTabs(args.old_str);
          const newStr = expandTabs(args.new_str ?? '');
          const parts = text.split(oldStr);
          if (parts.length === 1)
            return err(
              `No replacement was performed, old_str \`${args.old_str}\` did not appear verbatim in ${args.path}.`,
            );
          if (parts.length > 2) {
            const lines: number[] = [];
            let offset = 0;
            for (const part of parts.slice(0, -1)) {
              offset += part.length;
              lines.push(text.slice(0, offset).split('\n').length);
              offset += oldStr.length;
            }
            return err(
              `No replacement was performed. Multiple occurrences (${parts.length - 1}) of old_str \`${args.old_str}\` in lines ${lines.join(', ')}. Please ensure it is unique.`,
            );
          }
          const updated = parts.join(newStr);
          await writeFile(path, updated);
          const note = remember(path, { kind: 'edited', previous: content });
          const line = (parts[0] ?? '').split('\n').length - 1;
          return ok(snippet(updated, args.path, line, newStr.split('\n').length) + note);
        }
        case 'insert': {
          if (args.insert_line === undefined) return err(required('insert_line', 'insert'));
          if (args.new_str === undefined) return err(required('new_str', 'insert'));
          const lines = expandTabs(content).split('\n');
          if (args.insert_line < 0 || args.insert_line > lines.length) {
            return err(
              `Invalid \`insert_line\` parameter: ${args.insert_line}. It should be within the range of lines of the file: [0, ${lines.length}]`,
            );
          }
          const inserted = expandTabs(args.new_str).split('\n');
          const updated = [...lines.slice(0, args.insert_line), ...inserted, ...lines.slice(args.insert_line)].join(
            '\n',
          );
          await writeFile(path, updated);
          const note = remember(path, { kind: 'edited', previous: content });
          return ok(snippet(updated, args.path, args.insert_line, inserted.length) + note);
        }
        case 'undo_edit': {
          const edits = history[path] ?? [];
          const last = edits.at(-1);
          if (!last) return err(`No edit history found for ${args.path}.`);
          // The history changes only once the file is back as it was.
          const { [path]: _all, ...others } = history;
          const rest = edits.length > 1 ? { ...others, [path]: edits.slice(0, -1) } : others;
          if (last.kind === 'created') {
            await rm(path);
            scope.setData(rest);
            return ok(`Undid the creation of ${args.path}: the file was removed.`);
          }
          await writeFile(path, last.previous);
          scope.setData(rest);
          return ok(`Last edit to ${args.path} undone successfully. ${numbered(last.previous, args.path, max)}`);
        }
      }
    },
  });
}
