/**
 * SQLite has no server to push notifications and the runtime must not poll while idle. Commits
 * of other processes (workers, `apsup trigger`) touch the database files; a file watch wakes the
 * runtime, which then checks PRAGMA data_version (changes only for other connections' commits)
 * before notifying the families. No SQL statement runs while nothing is written.
 */
import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

export function watchSqliteCommits(db: BetterSqlite3.Database, file: string, onForeignCommit: () => void): () => void {
  let version = db.pragma('data_version', { simple: true }) as number;
  let timer: NodeJS.Timeout | null = null;
  const check = () => {
    timer = null;
    if (!db.open) return;
    const now = db.pragma('data_version', { simple: true }) as number;
    if (now !== version) {
      version = now;
      onForeignCommit();
    }
  };
  const onChange = () => {
    if (!timer) timer = setTimeout(check, 5);
  };
  const dir = path.dirname(path.resolve(file));
  const base = path.basename(file);
  const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
    if (name && (name === base || name === `${base}-wal`)) onChange();
  });
  return () => {
    watcher.close();
    if (timer) clearTimeout(timer);
  };
}
