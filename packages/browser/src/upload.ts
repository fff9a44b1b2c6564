import { basename, extname, isAbsolute, resolve } from 'node:path';
import {
  confineIn,
  hasErrorCode,
  NotRegularFileError,
  OpenManusError,
  openInside,
  WorkspaceError,
} from '@openmanus/core';

/** A file to hand to a page's file input: read here, so what is sent is what was checked. */
export interface UploadFile {
  readonly name: string;
  readonly mimeType: string;
  readonly buffer: Buffer;
}

const MIME_TYPES: Readonly<Record<string, string>> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.xml': 'application/xml',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.zip': 'application/zip',
};

/** Why a file cannot be uploaded, for the model. */
export class UploadRefusedError extends OpenManusError<'UPLOAD_REFUSED'> {
  static readonly codes = ['UPLOAD_REFUSED'] as const;
  override readonly name = 'UploadRefusedError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('UPLOAD_REFUSED', message, options);
  }
  static override isInstance(value: unknown): value is UploadRefusedError {
    return hasErrorCode(value, UploadRefusedError.codes);
  }
}

const reasons: Readonly<Record<string, string>> = {
  ENOENT: 'does not exist',
  EISDIR: 'is a directory',
  ENOTDIR: 'has a file where a directory should be on its path',
  ELOOP: 'is a symbolic link (links are not followed)',
  EACCES: 'cannot be read (permission denied)',
};

/**
 * The file at `path` (relative to the workspace, or absolute inside it), read whole: only a
 * regular file inside the workspace, checked on the file actually opened (a symlink out is
 * refused), and at most `maxBytes`.
 */
export async function readUpload(workspace: string, path: string, maxBytes: number): Promise<UploadFile> {
  if (path.includes('\0')) throw new UploadRefusedError(`the path ${JSON.stringify(path)} contains a NUL character`);
  try {
    const { root, target } = await confineIn(workspace, isAbsolute(path) ? path : resolve(workspace, path));
    const handle = await openInside(root, target, 'read', path);
    try {
      const stat = await handle.stat();
      if (stat.isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
      if (stat.size > maxBytes)
        throw new UploadRefusedError(`${path} is ${stat.size} bytes; at most ${maxBytes} can be uploaded`);
      const buffer = await handle.readFile();
      const mimeType = MIME_TYPES[extname(target).toLowerCase()] ?? 'application/octet-stream';
      return { name: basename(target), mimeType, buffer };
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof UploadRefusedError || error instanceof WorkspaceError)
      throw new UploadRefusedError(error.message);
    if (error instanceof NotRegularFileError)
      throw new UploadRefusedError(`${path} is not a regular file (${error.kind})`);
    const reason = reasons[(error as NodeJS.ErrnoException).code ?? ''];
    if (reason) throw new UploadRefusedError(`the file ${path} ${reason}`);
    throw error;
  }
}
