// The SQLite commit watch (RFC 8: no polling while idle) must see a foreign commit that is
// published just after its file event within about a millisecond, one published seconds later
// (its writer descheduled), and one whose event came with an earlier commit's; and it must stop
// looking a few seconds after the last event. The file watch itself is exercised with real processes in
// test/runtime/sqlite-idle.test.ts; here the schedule runs on a ManualClock.
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { erringWatch, failingWatch, restoreWatch, watchError } from '../helpers/fs-watch.ts';
import { commitVersionChecker, RECHECK_AFTER_MS, watchFailure, watchSqliteCommits } from '../../src/runtime/sqlite-wakeup.ts';

/** A checker on a ManualClock over a version the test sets (null: the database closed); counts reads and wake-ups. */
function manualChecker() {
  const clock = new ManualClock();
  const v = { value: 1 as number | null };
  const counts = { reads: 0, woken: 0 };
  const checker = commitVersionChecker(
    () => {
      counts.reads += 1;
      return v.value;
    },
    () => (counts.woken += 1),
    clock,
  );
  counts.reads = 0; // the baseline read
  return { clock, v, counts, checker };
}

/** A WAL database file with a table `t`, our connection and another one, removed afterwards. */
async function withTwoConnections(fn: (db: { file: string; mine: Database.Database; other: Database.Database }) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-wakeup-'));
  const file = path.join(dir, 'db.sqlite');
  const mine = new Database(file);
  mine.pragma('journal_mode = WAL');
  mine.exec('CREATE TABLE t (x INTEGER)');
  const other = new Database(file);
  try {
    await fn({ file, mine, other });
  } finally {
    other.close();
    mine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits (real time) until `until()` or 5 s, then 30 ms more for the rechecks of any later event. */
async function settle(until: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!until() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 30));
}

describe('SQLite commit watch schedule', () => {
  test('a commit published 0.5 ms after its file event is seen at the 1 ms recheck', async () => {
    const { clock, v, counts, checker } = manualChecker();
    checker.onEvent();
    await nextTurn(); // the immediate check: nothing published yet
    assert.equal(counts.woken, 0);
    await clock.advance(0.5);
    v.value = 2; // the writer publishes its commit in the shared-memory index (no file event)
    await clock.advance(0.5);
    assert.equal(counts.woken, 1, 'woken by the first recheck, 1 ms after the event');
    await clock.advance(10_000);
    assert.equal(counts.woken, 1, 'one wake-up per commit');
    assert.equal(clock.pending, 0, 'the rechecks end with their tail');
    checker.stop();
  });

  test('a commit published 2 s after its file event (its writer descheduled in between) is seen', async () => {
    const { clock, v, counts, checker } = manualChecker();
    checker.onEvent();
    await nextTurn();
    await clock.advance(2000);
    assert.equal(counts.woken, 0);
    v.value = 2;
    await clock.advance(3000);
    assert.equal(counts.woken, 1, 'a late publication is still seen');
    checker.stop();
  });

  test('a second commit whose event came with the first one and that publishes after the first was seen wakes again', async () => {
    const { clock, v, counts, checker } = manualChecker();
    v.value = 2; // commit A published; commit B's frames written, its event coalesced with A's
    checker.onEvent();
    await nextTurn();
    assert.equal(counts.woken, 1, 'A seen at once');
    await clock.advance(5);
    v.value = 3; // B published, no event of its own
    await clock.advance(100);
    assert.equal(counts.woken, 2, 'B seen although A already moved the version');
    checker.stop();
  });

  test('the rechecks count from the last event: one late in a long tail brings the next recheck back to 1 ms', async () => {
    const { clock, v, counts, checker } = manualChecker();
    checker.onEvent();
    await nextTurn();
    await clock.advance(1500); // the next recheck of the first event is ~2 s after it
    checker.onEvent();
    await nextTurn();
    v.value = 2;
    await clock.advance(1);
    assert.equal(counts.woken, 1, 'seen 1 ms after the second event');
    checker.stop();
  });

  test('an event of our own write (the version never moves) ends after the bounded rechecks', async () => {
    const { clock, counts, checker } = manualChecker();
    checker.onEvent();
    await nextTurn();
    await clock.advance(10_000);
    assert.equal(counts.woken, 0);
    assert.equal(counts.reads, 1 + RECHECK_AFTER_MS.length, 'one immediate check and the scheduled rechecks, no more');
    assert.equal(clock.pending, 0);
    checker.stop();
  });

  test('events during a pending recheck do not stack timers; a closed database stops the checks', async () => {
    const { clock, v, counts, checker } = manualChecker();
    for (let i = 0; i < 5; i += 1) {
      checker.onEvent();
      await nextTurn();
    }
    assert.equal(clock.pending, 1);
    v.value = null; // closed
    await clock.advance(1000);
    assert.equal(counts.woken, 0);
    assert.equal(clock.pending, 0);
    checker.stop();
  });

  test('stop cancels a pending recheck', async () => {
    const { clock, v, counts, checker } = manualChecker();
    checker.onEvent();
    await nextTurn();
    checker.stop();
    v.value = 2;
    await clock.advance(1000);
    assert.equal(counts.woken, 0);
    assert.equal(clock.pending, 0);
  });

  test('subscribers of one handle share one watch: one version check per event, each woken, the last one closes it', () =>
    withTwoConnections(async ({ file, mine, other }) => {
      let checks = 0;
      const prepare = mine.prepare.bind(mine);
      mine.prepare = ((source: string) => {
        const stmt = prepare(source);
        if (!/^PRAGMA data_version$/i.test(source)) return stmt;
        const get = stmt.get.bind(stmt);
        stmt.get = ((...args: unknown[]) => {
          checks += 1;
          return get(...args);
        }) as typeof stmt.get;
        return stmt;
      }) as typeof mine.prepare;
      const woken = { runtime: 0, tasks: 0 };
      // The rechecks run on a ManualClock: a commit's checks are counted whole once it is advanced past the tail.
      const clock = new ManualClock();
      const tail = RECHECK_AFTER_MS[RECHECK_AFTER_MS.length - 1];
      const stopRuntime = watchSqliteCommits(mine, file, () => (woken.runtime += 1), clock);
      const stopTasks = watchSqliteCommits(mine, file, () => (woken.tasks += 1), clock);
      try {
        assert.equal(checks, 1, 'one baseline read for both subscribers');
        checks = 0;
        other.exec('INSERT INTO t VALUES (1)');
        await settle(() => woken.runtime === 1 && woken.tasks === 1);
        await clock.advance(tail);
        assert.deepEqual(woken, { runtime: 1, tasks: 1 });
        const perCommit = checks;
        // One watch: its immediate checks (one per batch of file events) and one tail; two watches: two tails.
        assert.ok(perCommit > RECHECK_AFTER_MS.length && perCommit < 2 * (1 + RECHECK_AFTER_MS.length), `${perCommit} version checks for one commit`);
        stopRuntime();
        checks = 0;
        other.exec('INSERT INTO t VALUES (2)');
        await settle(() => woken.tasks === 2);
        await clock.advance(tail);
        assert.deepEqual(woken, { runtime: 1, tasks: 2 }, 'the remaining subscriber is still woken');
        assert.ok(checks <= perCommit + 1 + RECHECK_AFTER_MS.length);
        stopTasks();
        checks = 0;
        // Positive evidence instead of a pause: a watch of our own sees the commit's file event,
        // which a watch left open would have seen in the same turn.
        const observed = new Promise<void>((resolve) => {
          const w = fs.watch(path.dirname(file), (_event, name) => {
            if (name === `${path.basename(file)}-wal`) {
              w.close();
              resolve();
            }
          });
        });
        other.exec('INSERT INTO t VALUES (3)');
        await observed;
        await nextTurn();
        await clock.advance(tail);
        assert.deepEqual(woken, { runtime: 1, tasks: 2 });
        assert.equal(checks, 0, 'the watch closed with its last subscriber');
      } finally {
        stopRuntime();
        stopTasks();
      }
    }));

  test('a commit of another connection wakes the watch through the file event', () =>
    withTwoConnections(async ({ file, mine, other }) => {
      let woken = 0;
      const unwatch = watchSqliteCommits(mine, file, () => (woken += 1));
      try {
        mine.exec('INSERT INTO t VALUES (1)'); // our own commit: data_version does not move
        other.exec('INSERT INTO t VALUES (2)');
        await settle(() => woken > 0);
        assert.equal(woken, 1);
      } finally {
        unwatch();
      }
    }));

  test('a directory that cannot be watched is a one-line error naming the limit to raise; a later watch error reaches each subscriber', () =>
    withTwoConnections(async ({ file, mine }) => {
      const limit = watchError('ENOSPC');
      try {
        failingWatch(limit);
        assert.throws(
          () => watchSqliteCommits(mine, file, () => undefined),
          (e: Error) => e.message === watchFailure(path.dirname(file), limit) && /fs\.inotify\.max_user_watches/.test(e.message) && !e.message.includes('\n'),
        );
      } finally {
        restoreWatch();
      }
      assert.match(watchFailure('/d', watchError('EMFILE')), /fs\.inotify\.max_user_instances/);
      try {
        const fail = erringWatch();
        const errors: string[] = [];
        const stopA = watchSqliteCommits(
          mine,
          file,
          () => undefined,
          undefined,
          (e) => errors.push(`a: ${e.message}`),
        );
        const stopB = watchSqliteCommits(
          mine,
          file,
          () => undefined,
          undefined,
          (e) => errors.push(`b: ${e.message}`),
        );
        const io = watchError('EIO');
        fail(io);
        assert.deepEqual(errors, [`a: ${watchFailure(path.dirname(file), io)}`, `b: ${watchFailure(path.dirname(file), io)}`]);
        stopA();
        stopB();
      } finally {
        restoreWatch();
      }
    }));

  test('an unreadable version (a WAL being recovered) wakes and keeps looking', async () => {
    const clock = new ManualClock();
    let fail = false;
    let woken = 0;
    const checker = commitVersionChecker(
      () => {
        if (fail) throw Object.assign(new Error('SQLITE_BUSY_RECOVERY'), { code: 'SQLITE_BUSY_RECOVERY' });
        return 1;
      },
      () => (woken += 1),
      clock,
    );
    fail = true;
    checker.onEvent();
    await nextTurn();
    assert.equal(woken, 1, 'a failed read counts as a change');
    assert.equal(clock.pending, 1, 'the rechecks go on');
    checker.stop();
  });

  test('a database opened through a symbolic link is watched where SQLite writes: beside the linked file', async () => {
    await withTwoConnections(async ({ file, other }) => {
      const link = path.join(path.dirname(file), 'link.sqlite');
      fs.symlinkSync(file, link);
      const viaLink = new Database(link);
      let woken = 0;
      const unwatch = watchSqliteCommits(viaLink, link, () => (woken += 1));
      try {
        other.exec('INSERT INTO t VALUES (1)');
        await settle(() => woken > 0);
        assert.equal(woken, 1);
      } finally {
        unwatch();
        viaLink.close();
      }
    });
  });
});
