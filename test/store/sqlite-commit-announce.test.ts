// RFC 8: nothing polls an idle SQLite runtime; a commit of an `apsup` command in another process
// must still wake it. The file event of a commit comes from its WAL frames, which the writer
// writes before it publishes the commit, so the watch's first check often finds nothing new and a
// recheck on a timer saw it. A command's store now touches the WAL file after each commit it
// made: here the watch's rechecks run on a clock that never moves, and every commit must still
// be seen, one at a time.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { test } from 'node:test';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { watchSqliteCommits } from '../../src/runtime/sqlite-wakeup.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createBackend } from '../helpers/backends.ts';
import { fixtureChild } from '../helpers/fixture-child.ts';

/** Commits per write path. */
const COMMITS = 4;

test("every commit of a command's store (operation, transaction, statement, statement with RETURNING) wakes the watch without a recheck", async () => {
  const fx = await createBackend('sqlite');
  const file = (fx.target as { file: string }).file;
  const host = SqliteStore.openHost(file);
  host.db.exec('CREATE TABLE t (x INTEGER, pad BLOB)');
  let woken = 0;
  const unwatch = watchSqliteCommits(host.db, file, () => (woken += 1), new ManualClock());
  const entry = fixtureChild('test/fixtures/commit-writer.ts');
  const child = fork(entry.args.at(-1)!, [], {
    execArgv: entry.args.slice(0, -1),
    env: { ...process.env, ...entry.env, APSUP_TEST_SQLITE_FILE: file, POWERCONTEXT_SERVER_RUNTIME_SQLITE_SYNCHRONOUS: 'FULL' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const reply = () => new Promise<unknown>((resolve) => child.once('message', resolve));
  try {
    assert.equal(await reply(), 'ready');
    const missed: string[] = [];
    let n = 0;
    for (const path of ['statement', 'transaction', 'operation', 'returning']) {
      // FULL sync puts an fsync between a commit's frame writes and its publication; here each
      // connection's first commit showed that window in every run without the touch.
      const reopened = reply();
      child.send({ n: 0, path: 'reopen' });
      await reopened;
      for (let i = 0; i < COMMITS; i += 1) {
        n += 1;
        const before = woken;
        const answered = reply();
        child.send({ n, path });
        assert.equal(await answered, n);
        const deadline = Date.now() + 2000; // a file event arrives within milliseconds
        while (woken === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
        if (woken === before) missed.push(`${path} ${n}`);
      }
    }
    assert.deepEqual(missed, [], 'commits seen only by a recheck (or not at all)');
  } finally {
    unwatch();
    child.disconnect();
    await new Promise((r) => child.once('exit', r));
    await host.close();
    await fx.cleanup();
  }
});
