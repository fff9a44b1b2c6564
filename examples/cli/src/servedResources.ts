import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { confineIn, openInside } from '@openmanus/core';
import type { CatalogOptions, McpPrompt, McpResourceTemplate, ResourceInfo } from '@openmanus/mcp';

/** The largest file served whole, as a resource or in a prompt. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** Files `resources/list` and completion show at most. */
export const MAX_LISTED_FILES = 200;
/** Directory entries a listing looks at, at most (a workspace with node_modules in it is large). */
const MAX_SCANNED_ENTRIES = 20_000;

const MIME_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.txt': 'text/plain',
  '.json': 'application/json',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.ts': 'text/x-typescript',
  '.py': 'text/x-python',
  '.html': 'text/html',
  '.css': 'text/css',
  '.csv': 'text/csv',
  '.yml': 'application/yaml',
  '.yaml': 'application/yaml',
  '.toml': 'application/toml',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
};

/** A file's content as served: text when it is UTF-8 without NUL bytes, bytes otherwise. */
export type FileContent =
  | { readonly text: string; readonly mimeType: string }
  | { readonly blob: string; readonly mimeType: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function asContent(path: string, bytes: Buffer): FileContent {
  const known = MIME_TYPES[extname(path).toLowerCase()];
  if (!bytes.includes(0)) {
    try {
      return { text: utf8.decode(bytes), mimeType: known ?? 'text/plain' };
    } catch {
      // Not UTF-8: served as bytes.
    }
  }
  return { blob: bytes.toString('base64'), mimeType: known ?? 'application/octet-stream' };
}

/**
 * Reads `path` (relative to the workspace, or absolute inside it), confined: no `..` out, no
 * symlink followed out of it (core's `confineIn` and `openInside`), regular files only, at most
 * `MAX_FILE_BYTES` (checked on what is read, not only on what a stat said).
 */
export async function readWorkspaceFile(workspace: string, path: string): Promise<FileContent> {
  const { root, target } = await confineIn(workspace, isAbsolute(path) ? path : join(workspace, path));
  const handle = await openInside(root, target, 'read', path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new Error(`${path} does not exist in the workspace`);
    if (error.code === 'ELOOP') throw new Error(`${path} is a symbolic link; links are not followed`);
    throw error;
  });
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new Error(`${path} is not a file`);
    const tooBig = (size: number) =>
      new Error(`${path} is ${size} bytes; files of at most ${MAX_FILE_BYTES} bytes are served`);
    if (stats.size > MAX_FILE_BYTES) throw tooBig(stats.size);
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled > MAX_FILE_BYTES) throw tooBig(filled);
    }
    return asContent(path, buffer.subarray(0, filled));
  } finally {
    await handle.close();
  }
}

/**
 * The workspace's files, breadth first and sorted, as paths relative to it: regular files only,
 * without hidden entries, never through a symlink, at most `MAX_LISTED_FILES`.
 */
export async function listWorkspaceFiles(workspace: string): Promise<string[]> {
  const { root } = await confineIn(workspace, workspace);
  const files: string[] = [];
  const queue = [root];
  let scanned = 0;
  while (queue.length > 0 && files.length < MAX_LISTED_FILES && scanned < MAX_SCANNED_ENTRIES) {
    const dir = queue.shift() as string;
    const entries: Dirent[] = await readdir(dir, { withFileTypes: true }).catch(() => []);
    // By code unit, the same on every machine (localeCompare depends on the locale).
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      scanned += 1;
      if (entry.name.startsWith('.')) continue;
      // A Dirent does not follow links: a symlink is neither a file nor a directory here.
      if (entry.isDirectory()) queue.push(join(dir, entry.name));
      else if (entry.isFile() && files.length < MAX_LISTED_FILES) files.push(relative(root, join(dir, entry.name)));
    }
  }
  return files;
}

/** The workspace's files as `file://` resources (one template), and the prompts review_file and plan_task. */
export function workspaceCatalog(workspace: string): CatalogOptions {
  const base = pathToFileURL(workspace).href.replace(/\/$/, '');
  const uriOf = (path: string) => `${base}/${path.split(sep).map(encodeURIComponent).join('/')}`;
  const completePath = async (value: string) =>
    (await listWorkspaceFiles(workspace)).filter((path) => path.startsWith(value));

  const files: McpResourceTemplate = {
    uriTemplate: `${base}/{+path}`,
    name: 'workspace-file',
    title: 'Workspace file',
    description: `A file in the workspace ${workspace} (text as text, other files as base64; at most ${MAX_FILE_BYTES} bytes)`,
    read: (_uri, { path = '' }) => readWorkspaceFile(workspace, path),
    list: async (): Promise<ResourceInfo[]> =>
      (await listWorkspaceFiles(workspace)).map((path) => ({
        uri: uriOf(path),
        name: path,
        ...(MIME_TYPES[extname(path).toLowerCase()] ? { mimeType: MIME_TYPES[extname(path).toLowerCase()] } : {}),
      })),
    complete: { path: completePath },
  };

  const reviewFile: McpPrompt = {
    name: 'review_file',
    title: 'Review a file',
    description: 'Asks for a review of a text file of the workspace, embedded in the message.',
    arguments: [{ name: 'path', description: 'The file, relative to the workspace', required: true }],
    async get({ path = '' }) {
      const content = await readWorkspaceFile(workspace, path);
      if (!('text' in content)) throw new Error(`${path} is not a text file`);
      return [
        {
          content: { type: 'resource', resource: { uri: uriOf(path), mimeType: content.mimeType, text: content.text } },
        },
        {
          content: `Please review ${path} (above): say what it does, then point out bugs, unclear code and security problems, each with its line and a concrete fix. Do not change the file.`,
        },
      ];
    },
    complete: { path: completePath },
  };

  const planTask: McpPrompt = {
    name: 'plan_task',
    title: 'Plan a task',
    description: 'Asks for a plan of numbered steps before a task is done with the tools.',
    arguments: [{ name: 'task', description: 'What is to be done', required: true }],
    get: ({ task = '' }) =>
      `Plan this task before doing any of it:\n\n${task}\n\nThe workspace is ${workspace}: bash starts there and str_replace_editor edits files inside it. Look at what is there first, then write numbered steps, each small enough to check, with how you will check it. Then carry them out one at a time.`,
  };

  return { resourceTemplates: [files], prompts: [reviewFile, planTask] };
}
