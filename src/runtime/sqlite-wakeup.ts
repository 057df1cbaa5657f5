/**
 * SQLite has no server to push notifications and the runtime must not poll while idle. Commits
 * of other processes (workers, `apsup trigger`) touch the database files; a file watch wakes the
 * runtime, which then checks PRAGMA data_version (changes only for other connections' commits)
 * before notifying the families. No SQL statement runs while nothing is written.
 *
 * A change is checked at once (setImmediate), so a commit that is complete when its file event
 * arrives wakes the runtime without delay. The event can come from the WAL frames, before the
 * writer publishes the commit in the shared-memory index (which makes no file event of its own);
 * the version is then checked again after RECHECK_MS (1, then 2 more, then 4 more ms) until it
 * moves: a single 5 ms recheck put 5 ms on about one wake-up in ten.
 */
import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { systemClock, type Clock, type ClockTimer } from './clock.ts';

/** Delays of the rechecks after a file event that found data_version unchanged (ms, each from the previous). */
export const RECHECK_MS: readonly number[] = [1, 2, 4];

/**
 * The check schedule without the file watch: `onEvent` per file event; `readVersion` reads
 * data_version (null once the database is closed).
 */
export function commitVersionChecker(
  readVersion: () => number | null,
  onForeignCommit: () => void,
  clock: Clock = systemClock,
): { onEvent: () => void; stop: () => void } {
  let version = readVersion();
  let timer: ClockTimer | null = null;
  let immediate: NodeJS.Immediate | null = null;
  let stopped = false;
  const changed = (): boolean => {
    const now = readVersion();
    if (now === null || now === version) return false;
    version = now;
    onForeignCommit();
    return true;
  };
  const schedule = (step: number) => {
    timer = clock.setTimeout(() => {
      timer = null;
      if (!stopped && !changed() && step + 1 < RECHECK_MS.length) schedule(step + 1);
    }, RECHECK_MS[step]);
  };
  const checkNow = () => {
    immediate = null;
    if (stopped) return;
    if (changed()) {
      timer?.cancel();
      timer = null;
    } else if (!timer) {
      schedule(0);
    }
  };
  return {
    onEvent() {
      if (!immediate && !stopped) immediate = setImmediate(checkNow);
    },
    stop() {
      stopped = true;
      timer?.cancel();
      if (immediate) clearImmediate(immediate);
    },
  };
}

/** One file watch and one version check per database handle, whoever subscribes (the runtime, the task runner). */
const shared = new Map<BetterSqlite3.Database, { listeners: Set<() => void>; close: () => void }>();

/**
 * Calls onForeignCommit after each commit of another connection to `file`. Subscribers of one
 * handle share one watch (an `apsup run` host's runtime and task runner check data_version once
 * per file event, not once each); the first subscriber's clock times the rechecks.
 */
export function watchSqliteCommits(db: BetterSqlite3.Database, file: string, onForeignCommit: () => void, clock: Clock = systemClock): () => void {
  let entry = shared.get(db);
  if (!entry) {
    const listeners = new Set<() => void>();
    // Prepared once: a busy host reads it after most of its own commits' file events.
    const dataVersion = db.prepare('PRAGMA data_version').pluck();
    const checker = commitVersionChecker(
      () => (db.open ? (dataVersion.get() as number) : null),
      () => {
        for (const listener of [...listeners]) listener();
      },
      clock,
    );
    const dir = path.dirname(path.resolve(file));
    const base = path.basename(file);
    const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
      if (name && (name === base || name === `${base}-wal`)) checker.onEvent();
    });
    entry = {
      listeners,
      close: () => {
        watcher.close();
        checker.stop();
      },
    };
    shared.set(db, entry);
  }
  const subscription = entry;
  const listener = () => onForeignCommit();
  subscription.listeners.add(listener);
  return () => {
    if (!subscription.listeners.delete(listener) || subscription.listeners.size > 0) return;
    subscription.close();
    if (shared.get(db) === subscription) shared.delete(db);
  };
}
