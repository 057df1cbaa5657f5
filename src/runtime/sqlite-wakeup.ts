/**
 * SQLite has no server to push notifications and the runtime must not poll while idle (RFC 8).
 * Commits of other processes (workers, `apsup trigger`) touch the database files; a file watch
 * wakes the runtime, which then checks PRAGMA data_version (changes only for other connections'
 * commits) before notifying the families. No SQL statement runs while nothing is written.
 *
 * A file event can come from a commit's WAL frames before the writer publishes the commit in the
 * shared-memory index, which makes no file event of its own; a writer descheduled in between
 * (a loaded machine) publishes it milliseconds to seconds later. So the version is checked at
 * once (setImmediate) and again RECHECK_AFTER_MS after the LAST event's check, whether or not one
 * found it moved: events of two commits arrive together and the second may publish after the
 * first was seen. Only file events start checks: an idle database costs nothing. A command's
 * store (store/open.ts) touches the WAL file after each commit, an event after the publication.
 */
import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { realPath } from '../store/sqlite/wal-file.ts';
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
    let now: number | null;
    try {
      now = readVersion();
    } catch {
      now = NaN; // unreadable (e.g. the WAL being recovered): differs from any version, so wake and keep looking
    }
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

/**
 * The one-line reason a directory cannot be watched, with what an operator can change (Linux:
 * the inotify limits are per user, and every watching process takes an instance).
 */
export function watchFailure(dir: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const hint =
    code === 'ENOSPC'
      ? 'the inotify watch limit is reached: raise fs.inotify.max_user_watches (sysctl)'
      : code === 'EMFILE'
        ? 'the inotify instance limit is reached: raise fs.inotify.max_user_instances (sysctl)'
        : ((error as Error | null)?.message ?? String(error));
  return `cannot watch ${dir} for other processes' commits, which wake the runtime (nothing polls): ${hint}`;
}

interface SharedWatch {
  listeners: Set<() => void>;
  errorListeners: Set<(error: Error) => void>;
  close: () => void;
}

/** One file watch and one version check per database handle, whoever subscribes (the runtime, the task runner). */
const shared = new Map<BetterSqlite3.Database, SharedWatch>();

/**
 * Calls onForeignCommit after each commit of another connection to `file`. Subscribers of one
 * handle share one watch (an `apsup run` host's runtime and task runner check data_version once
 * per file event, not once each); the first subscriber's clock times the rechecks. Throws when
 * the directory cannot be watched (watchFailure); a watch that fails later calls onError.
 */
export function watchSqliteCommits(
  db: BetterSqlite3.Database,
  file: string,
  onForeignCommit: () => void,
  clock: Clock = systemClock,
  onError?: (error: Error) => void,
): () => void {
  let entry = shared.get(db);
  if (!entry) {
    const listeners = new Set<() => void>();
    const errorListeners = new Set<(error: Error) => void>();
    // The directory of the WAL (wal-file.ts), and the names of the database and its WAL there.
    const real = realPath(file);
    const dir = path.dirname(real);
    const base = path.basename(real);
    // Prepared once: a busy host reads it after most of its own commits' file events.
    const dataVersion = db.prepare('PRAGMA data_version').pluck();
    const checker = commitVersionChecker(
      () => (db.open ? (dataVersion.get() as number) : null),
      () => {
        for (const listener of [...listeners]) listener();
      },
      clock,
    );
    let watcher: fs.FSWatcher;
    try {
      watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
        if (name && (name === base || name === `${base}-wal`)) checker.onEvent();
      });
    } catch (error) {
      throw new Error(watchFailure(dir, error), { cause: error });
    }
    watcher.on('error', (error) => {
      // The watcher is closed: a later subscriber starts a new one.
      if (shared.get(db) === entry) shared.delete(db);
      checker.stop();
      const failure = new Error(watchFailure(dir, error), { cause: error });
      for (const listener of [...errorListeners]) listener(failure);
    });
    entry = {
      listeners,
      errorListeners,
      close: () => {
        watcher.close();
        checker.stop();
      },
    };
    shared.set(db, entry);
  }
  const subscription = entry;
  const listener = () => onForeignCommit();
  const errorListener = (error: Error) => onError?.(error);
  subscription.listeners.add(listener);
  subscription.errorListeners.add(errorListener);
  return () => {
    subscription.errorListeners.delete(errorListener);
    if (!subscription.listeners.delete(listener) || subscription.listeners.size > 0) return;
    subscription.close();
    if (shared.get(db) === subscription) shared.delete(db);
  };
}
