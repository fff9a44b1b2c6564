// What str_replace_editor does with a call: loaded on the tool's first call, not with the package.
import { isUtf8 } from 'node:buffer';
import { err, ok } from '../result.js';
import { sandboxFor } from '../sandbox/runSandbox.js';
import type { ToolScope } from '../shell/scope.js';
import { type ListedEntry, NotRegularFileError } from './confinedFile.js';
import { type EditorPath, type OpenedPath, sandboxPath, workspacePath } from './editorFiles.js';
import { type EditorArgs, expandTabs, type StrReplaceEditorOptions } from './strReplaceEditor.js';
import { WorkspaceError } from './workspace.js';

const SNIPPET_LINES = 4;
// Files are read whole; anything bigger is for python_execute, not for the model's context.
const MAX_FILE_BYTES = 10 * 1024 * 1024;
const CLIPPED =
  '<response clipped><NOTE>To save on context only part of this file has been shown to you. ' +
  'Use view_range, or search the file with python_execute, to see the rest.</NOTE>';

/** `cat -n` of some text, numbered from `firstLine`, clipped at `max` characters. */
function numbered(text: string, label: string, max: number, firstLine = 1): string {
  const clipped = text.length > max ? `${text.slice(0, max)}${CLIPPED}` : text;
  const lines = expandTabs(clipped)
    .split('\n')
    .map((line, i) => `${String(i + firstLine).padStart(6)}\t${line}`);
  return `Here's the result of running \`cat -n\` on ${label}:\n${lines.join('\n')}\n`;
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

/**
 * The text of a file's bytes, or undefined when they are "binary": not valid UTF-8, or with a
 * NUL byte. Valid UTF-8 decodes and encodes back to the same bytes (a BOM included), so an edit
 * changes only the bytes it replaces.
 */
function textOf(bytes: Buffer): string | undefined {
  return isUtf8(bytes) && !bytes.includes(0) ? bytes.toString('utf8') : undefined;
}

/** `text` with its tabs expanded, and for each index of that, the index in `text` it starts, or -1. */
function expandedWithMap(text: string): { expanded: string; rawAt: Int32Array } {
  const parts: string[] = [];
  const starts: number[] = [];
  let length = 0;
  let column = 0;
  let raw = 0;
  for (const ch of text) {
    starts.push(length, raw);
    const piece = ch === '\t' ? ' '.repeat(8 - (column % 8)) : ch;
    parts.push(piece);
    length += piece.length;
    column = ch === '\n' ? 0 : column + piece.length;
    raw += ch.length;
  }
  const rawAt = new Int32Array(length + 1).fill(-1);
  for (let i = 0; i < starts.length; i += 2) rawAt[starts[i] ?? 0] = starts[i + 1] ?? 0;
  rawAt[length] = text.length;
  return { expanded: parts.join(''), rawAt };
}

/** Start indices of the non-overlapping occurrences of `needle` in `haystack`, left to right. */
function indicesOf(haystack: string, needle: string): number[] {
  const found: number[] = [];
  if (needle === '') return found;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

/**
 * Where `oldStr` occurs in the file's text, as [start, end) spans of that text. Edits match and
 * write the raw text (its tabs stay tabs); only when there is no exact match is `oldStr` looked
 * for in the text as `view` shows it (tabs expanded, as OpenManus matches), each match mapped
 * back to the raw span it covers (a match starting or ending inside a tab's spaces is none).
 */
function spansOf(text: string, oldStr: string): Array<readonly [number, number]> {
  const exact = indicesOf(text, oldStr).map((at) => [at, at + oldStr.length] as const);
  if (exact.length > 0 || !text.includes('\t')) return exact;
  const { expanded, rawAt } = expandedWithMap(text);
  const needle = expandTabs(oldStr);
  return indicesOf(expanded, needle)
    .map((at) => [rawAt[at] ?? -1, rawAt[at + needle.length] ?? -1] as const)
    .filter(([start, end]) => start >= 0 && end >= 0);
}

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** The listing's lines, clipped at `max` characters with a note of how many entries were left out. */
function listing(root: string, entries: readonly ListedEntry[], max: number): string {
  const lines = [root];
  let size = root.length;
  for (const entry of entries) {
    const line = entry.special ? `${entry.path} [${entry.special}]` : entry.path;
    if (size + line.length + 1 > max) break;
    lines.push(line);
    size += line.length + 1;
  }
  const hidden = entries.length - (lines.length - 1);
  if (hidden === 0) return lines.join('\n');
  return (
    `${lines.join('\n')}\n<response clipped><NOTE>${hidden} of ${entries.length} entries are not shown. ` +
    'View a subdirectory, or list them with python_execute, to see the rest.</NOTE>'
  );
}

const notRegular = (path: string, kind: string) =>
  `The path ${path} is not a regular file (it is a ${kind}); this editor only views and edits regular files.`;
const exists = (path: string) => `File already exists at: ${path}. Cannot overwrite files using command \`create\`.`;
const missing = (path: string) => `The path ${path} does not exist. Please provide a valid path.`;

/** The message for an error met opening a path, or undefined for an error that is not about the path. */
function refusal(error: unknown, path: string, command: string): string | undefined {
  if (error instanceof WorkspaceError) return error.message;
  if (error instanceof NotRegularFileError) return notRegular(path, error.kind);
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENOENT':
      return missing(path);
    case 'ENOTDIR':
      return command === 'create' ? `Cannot create ${path}: a directory on its path is a file.` : missing(path);
    case 'EEXIST':
      return exists(path);
    case 'EISDIR':
      return `The path ${path} is a directory and only the \`view\` command can be used on directories.`;
    case 'ELOOP':
    case 'EMLINK':
      return `The path ${path} is, or goes through, a symbolic link to something missing or outside the workspace; it is not followed.`;
    case 'ENXIO':
      return notRegular(path, 'socket or a device');
    case 'EACCES':
    case 'EPERM':
      return `The path ${path} cannot be ${command === 'view' ? 'read' : 'written'}: permission denied.`;
    default:
      return undefined;
  }
}

/** Runs one call of the editor built with `options`. */
export async function runEditorCommand(options: StrReplaceEditorOptions, args: EditorArgs, scope: ToolScope) {
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

  const history = (scope.data ?? {}) as UndoHistory;
  /** Records the edit; says so when it cannot be undone. */
  const remember = (path: string, edit: Edit): string => {
    const { history: next, kept } = withEdit(history, path, edit);
    scope.setData(next);
    return kept ? '' : TOO_LARGE_TO_UNDO;
  };
  let at: EditorPath;
  try {
    const sandbox = sandboxFor(scope, options.sandboxProvider);
    at = sandbox ? sandboxPath(await sandbox(), args.path) : await workspacePath(options.workspace, args.path);
  } catch (error) {
    if (error instanceof WorkspaceError) return err(error.message);
    throw error;
  }
  const path = at.target;

  // Every command opens the file once, checked, and reads and writes through that handle only.
  let handle: OpenedPath | undefined;
  try {
    switch (args.command) {
      case 'create': {
        if (args.file_text === undefined) {
          // An existing file is reported first, as OpenManus does.
          return err((await at.exists()) ? exists(args.path) : required('file_text', 'create'));
        }
        await at.create(Buffer.from(args.file_text));
        remember(path, { kind: 'created' });
        return ok(`File created successfully at: ${args.path}`);
      }
      case 'undo_edit': {
        const edits = history[path] ?? [];
        const last = edits.at(-1);
        if (!last) return err(`No edit history found for ${args.path}.`);
        // The history changes only once the file is back as it was.
        const { [path]: _all, ...others } = history;
        const rest = edits.length > 1 ? { ...others, [path]: edits.slice(0, -1) } : others;
        if (last.kind === 'created') {
          await at.remove();
          scope.setData(rest);
          return ok(`Undid the creation of ${args.path}: the file was removed.`);
        }
        handle = await at.open('write');
        if (handle.kind !== 'file') return err(notRegular(args.path, 'special file'));
        await handle.write(Buffer.from(last.previous));
        scope.setData(rest);
        return ok(`Last edit to ${args.path} undone successfully. ${numbered(last.previous, args.path, max)}`);
      }
    }
    const opened = await at.open(args.command === 'view' ? 'read' : 'write');
    handle = opened;
    if (opened.kind === 'directory') {
      // Only a view opens for reading, so only a view gets here with a directory.
      if (args.view_range) return err('The `view_range` parameter is not allowed when `path` points to a directory.');
      const entries = await opened.list();
      return ok(
        `Here are the files and directories up to 2 levels deep in ${args.path}, excluding hidden items:\n${listing(path, entries, max)}\n`,
      );
    }
    if (opened.kind !== 'file') return err(notRegular(args.path, 'special file'));
    const tooLarge = (size: string) =>
      err(
        `The file ${args.path} is ${size}, too large for this editor (limit ${MAX_FILE_BYTES / 1024 / 1024} MB). Inspect it with python_execute.`,
      );
    if (opened.size > MAX_FILE_BYTES) return tooLarge(`${(opened.size / 1024 / 1024).toFixed(1)} MB`);
    // The read is bounded itself: the file may have grown since its size was seen.
    const bytes = await opened.read(MAX_FILE_BYTES + 1);
    if (bytes.length > MAX_FILE_BYTES) return tooLarge(`over ${MAX_FILE_BYTES / 1024 / 1024} MB`);
    const content = textOf(bytes);
    if (content === undefined) {
      const what = `The file ${args.path} is binary (not UTF-8 text, or it has NUL bytes)`;
      return args.command === 'view'
        ? ok(`${what}, ${bytes.length} bytes; it is not shown. Inspect it with python_execute.`)
        : err(`${what}; this editor does not edit it. Use python_execute to change it.`);
    }
    const write = (updated: string) => opened.write(Buffer.from(updated));
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
        const newStr = args.new_str ?? '';
        const spans = spansOf(content, args.old_str);
        const [only] = spans;
        if (!only) {
          return err(
            `No replacement was performed, old_str \`${args.old_str}\` did not appear verbatim in ${args.path}.`,
          );
        }
        if (spans.length > 1) {
          const lines = spans.map(([start]) => lineOf(content, start));
          return err(
            `No replacement was performed. Multiple occurrences (${spans.length}) of old_str \`${args.old_str}\` in lines ${lines.join(', ')}. Please ensure it is unique.`,
          );
        }
        const [start, end] = only;
        const updated = content.slice(0, start) + newStr + content.slice(end);
        await write(updated);
        const note = remember(path, { kind: 'edited', previous: content });
        return ok(snippet(updated, args.path, lineOf(content, start) - 1, newStr.split('\n').length) + note);
      }
      case 'insert': {
        if (args.insert_line === undefined) return err(required('insert_line', 'insert'));
        if (args.new_str === undefined) return err(required('new_str', 'insert'));
        const lines = content.split('\n');
        if (args.insert_line < 0 || args.insert_line > lines.length) {
          return err(
            `Invalid \`insert_line\` parameter: ${args.insert_line}. It should be within the range of lines of the file: [0, ${lines.length}]`,
          );
        }
        const inserted = args.new_str.split('\n');
        const updated = [...lines.slice(0, args.insert_line), ...inserted, ...lines.slice(args.insert_line)].join('\n');
        await write(updated);
        const note = remember(path, { kind: 'edited', previous: content });
        return ok(snippet(updated, args.path, args.insert_line, inserted.length) + note);
      }
    }
  } catch (error) {
    const message = refusal(error, args.path, args.command);
    if (message !== undefined) return err(message);
    throw error;
  } finally {
    await handle?.close();
  }
}
