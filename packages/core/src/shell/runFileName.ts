/**
 * Run ids as file names: only `[a-z0-9_.-]` stay as they are, every other UTF-8 byte becomes
 * `%XX`. So no id reaches outside the directory (`/` is escaped, and the suffix makes `..` a
 * plain name), and no two ids collide on a case-insensitive file system.
 */
const SUFFIX = '.jsonl';

export function runFileName(runId: string): string {
  // encodeURIComponent leaves upper case and !'()*~ as they are; its own %XX escapes are kept.
  const escaped = encodeURIComponent(runId).replace(/%[0-9A-F]{2}|[A-Z!'()*~]/g, (match) =>
    match.length === 3 ? match : `%${match.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${escaped}${SUFFIX}`;
}

/** The run id a file in the store's directory holds, or undefined for any other file. */
export function runIdOf(fileName: string): string | undefined {
  if (!fileName.endsWith(SUFFIX)) return undefined;
  let runId: string;
  try {
    runId = decodeURIComponent(fileName.slice(0, -SUFFIX.length));
  } catch {
    return undefined;
  }
  // Only names this store writes: a hand-made `Run.jsonl` is not the file of run `Run`.
  return runFileName(runId) === fileName ? runId : undefined;
}
