/**
 * SQLite has no server to push notifications and the runtime must not poll while idle (RFC 8).
 * Commits of other processes (workers, `apsup trigger`) touch the database files; a file watch
 * wakes the runtime, which then checks PRAGMA data_version (changes only for other connections'
 * commits) before notifying the families. No SQL statement runs while nothing is written.
 *
 * A file event can come from a commit's WAL frames before the writer publishes the commit in the
 * shared-memory index, which makes no file event of its own; a writer descheduled in between
 * (a loaded machine) publishes it milliseconds to seconds later. So the version is checked at
 * once (setImmediate) and again RECHECK_AFTER_MS after the LAST event, whether or not a check
 * found it moved: events of two commits arrive together and the second may publish after the
 * first was seen. Only file events start checks: an idle database costs nothing. A command's
 * store (store/open.ts) touches the WAL file after each commit, an event after the publication.
 */
import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { systemClock, type Clock, type ClockTimer } from './clock.ts';

/** When the version is checked again, in ms after the last file event: doubling steps, about 4 s in all. */
export const RECHECK_AFTER_MS: readonly number[] = [1, 3, 7, 15, 31, 63, 127, 255, 511, 1023, 2047, 4095];

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
  let lastEventAt = 0;
  let timer: ClockTimer | null = null;
  let timerAt = 0;
  let immediate: NodeJS.Immediate | null = null;
  let stopped = false;
  const check = (): boolean => {
    const now = readVersion();
    if (now === null) return false;
    if (now !== version) {
      version = now;
      onForeignCommit();
    }
    return true;
  };
  /** Arms the timer for the first recheck still ahead of `now`, none once the tail has passed. */
  const arm = (now: number) => {
    const next = RECHECK_AFTER_MS.find((offset) => lastEventAt + offset > now);
    if (next === undefined) return;
    timerAt = lastEventAt + next;
    timer = clock.setTimeout(() => {
      timer = null;
      if (!stopped && check()) arm(clock.monotonic());
    }, timerAt - now);
  };
  const checkNow = () => {
    immediate = null;
    if (stopped || !check()) return;
    const now = clock.monotonic();
    lastEventAt = now;
    // A timer armed far ahead (late in an earlier tail) is brought back to this event's first recheck.
    if (timer && timerAt > now + RECHECK_AFTER_MS[0]) {
      timer.cancel();
      timer = null;
    }
    if (!timer) arm(now);
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
