/**
 * SQLite has no server to push notifications and the runtime must not poll while idle. Commits
 * of other processes (workers, `apsup trigger`) touch the database files; a file watch wakes the
 * runtime, which then checks PRAGMA data_version (changes only for other connections' commits)
 * before notifying the families. No SQL statement runs while nothing is written.
 *
 * A change is checked at once (setImmediate), so a commit that is complete when its file event
 * arrives wakes the runtime without delay; when the version has not moved yet (the event came from
 * the WAL frames, before the writer published the commit in the shared-memory index, which makes
 * no file event of its own), it is checked once more 5 ms later.
 */
import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

export function watchSqliteCommits(db: BetterSqlite3.Database, file: string, onForeignCommit: () => void): () => void {
  let version = db.pragma('data_version', { simple: true }) as number;
  let timer: NodeJS.Timeout | null = null;
  let immediate: NodeJS.Immediate | null = null;
  const changed = (): boolean => {
    if (!db.open) return false;
    const now = db.pragma('data_version', { simple: true }) as number;
    if (now === version) return false;
    version = now;
    onForeignCommit();
    return true;
  };
  const recheck = () => {
    timer = null;
    changed();
  };
  const checkNow = () => {
    immediate = null;
    if (!changed() && !timer && db.open) timer = setTimeout(recheck, 5);
  };
  const onChange = () => {
    if (!immediate) immediate = setImmediate(checkNow);
  };
  const dir = path.dirname(path.resolve(file));
  const base = path.basename(file);
  const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
    if (name && (name === base || name === `${base}-wal`)) onChange();
  });
  return () => {
    watcher.close();
    if (timer) clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
  };
}
