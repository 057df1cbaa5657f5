/**
 * Where SQLite keeps a database's WAL: beside the file a symbolic link points to, not beside the
 * link. The commit watch (runtime/sqlite-wakeup.ts) watches that directory; a command's store
 * touches that file after each commit (sqlite-store.ts, announceCommits).
 */
import fs from 'node:fs';
import path from 'node:path';

/** The path with symbolic links resolved (the file as given, absolute, when it does not exist yet). */
export function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** The WAL file of the database `file`. */
export function walFileOf(file: string): string {
  return `${realPath(file)}-wal`;
}
