// begin-immediate.ts: a process that may block (worker, task child, CLI) waits for a write lock
// held by another connection in fine steps first (a short commit of another process costs it
// well under a millisecond), then in SQLite's own busy handler (fine probes for longer cost the
// holder its CPU when many processes contend): the verdict is the steps it took, recorded through
// its sleep, not a latency a loaded machine can stretch. Its busy_timeout is restored, and the
// busy_timeout stays the bound. The holder is another thread.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { beginImmediateBlocking, blockingSleep } from '../../src/store/sqlite/begin-immediate.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-begin-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function open(file: string, busyTimeoutMs: number): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  return db;
}

/**
 * A thread that takes the write lock, reports, holds it `holdMs` and, when `steps` is given, until
 * the waiter counted 5 steps there (so a stalled waiter cannot find the lock already free; at most
 * 5 s more), then
 * commits and reports the release time.
 */
function holder(
  file: string,
  holdMs: number,
  steps?: Int32Array,
): { held: Promise<unknown>; released: Promise<number>; exited: Promise<unknown>; worker: Worker } {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const db = new (require(workerData.sqlite))(workerData.file);
     db.exec('BEGIN IMMEDIATE');
     db.prepare('INSERT INTO t (v) VALUES (1)').run();
     parentPort.postMessage('held');
     const until = performance.now() + workerData.holdMs;
     const steps = workerData.steps ? new Int32Array(workerData.steps) : null;
     const cap = until + 5000; // a waiter that takes no steps (the fault this test catches) fails, not hangs
     while (performance.now() < until || (steps && Atomics.load(steps, 0) < 5 && performance.now() < cap)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
     db.exec('COMMIT');
     parentPort.postMessage(performance.timeOrigin + performance.now());
     db.close();`,
    { eval: true, workerData: { file, holdMs, steps: steps?.buffer, sqlite: createRequire(import.meta.url).resolve('better-sqlite3') } },
  );
  // Listened for from the start: the thread may exit before the test awaits its exit.
  const exited = once(worker, 'exit');
  const messages: unknown[] = [];
  const waiters: Array<() => void> = [];
  worker.on('message', (m) => {
    messages.push(m);
    for (const w of waiters.splice(0)) w();
  });
  const nth = (i: number): Promise<unknown> =>
    new Promise((resolve) => {
      const check = () => (messages.length > i ? resolve(messages[i]) : waiters.push(check));
      check();
    });
  return { held: nth(0), released: nth(1) as Promise<number>, exited, worker };
}

test('the wait probes in fine steps for its first 1.5 ms, then waits in SQLite; busy_timeout is restored', async () => {
  const file = path.join(dir, 'lag.sqlite');
  const db = open(file, 10_000);
  db.exec('CREATE TABLE t (v INTEGER)');
  const lags: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const counted = new Int32Array(new SharedArrayBuffer(4));
    const h = holder(file, 150, counted);
    await h.held;
    const steps: number[] = [];
    const t0 = performance.now();
    // Blocks this thread until the holder commits; SQLite's busy handler would wait inside the
    // first BEGIN and take no step here.
    beginImmediateBlocking(db, (ms) => {
      steps.push(ms);
      Atomics.store(counted, 0, steps.length);
      blockingSleep(ms);
    });
    const acquired = performance.timeOrigin + performance.now();
    const waited = performance.now() - t0;
    db.prepare('INSERT INTO t (v) VALUES (2)').run();
    db.exec('COMMIT');
    lags.push(acquired - (await h.released));
    await h.exited;
    // At least 5 fine steps (none before the fix of 2f11bb1), and no more than 2 ms of them
    // (probing a 150 ms wait every millisecond took 5 to 20 % of 8 contending processes' commits).
    const fine = steps.reduce((a, b) => a + b, 0);
    assert.ok(steps.length >= 5, `${steps.length} steps in a ${waited.toFixed(0)} ms wait`);
    assert.ok(fine <= 2 && Math.max(...steps) <= 1, `${steps.length} steps of ${fine.toFixed(2)} ms: ${steps.slice(0, 8).join(', ')} ...`);
  }
  // Not a verdict on its own (a loaded machine stretches any sleep): printed for the reader.
  console.log(`lag after the release: ${lags.map((l) => l.toFixed(1)).join(', ')} ms`);
  assert.equal(Number(db.pragma('busy_timeout', { simple: true })), 10_000);
  assert.equal(Number((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n), 6);
  db.close();
});

test('the busy_timeout stays the bound: a lock held longer fails with SQLITE_BUSY after it', async () => {
  const file = path.join(dir, 'bound.sqlite');
  const db = open(file, 200);
  db.exec('CREATE TABLE t (v INTEGER)');
  const h = holder(file, 1500);
  await h.held;
  const started = performance.now();
  assert.throws(
    () => beginImmediateBlocking(db),
    (e: { code?: string }) => e.code === 'SQLITE_BUSY',
  );
  const waited = performance.now() - started;
  assert.ok(waited >= 200 && waited < 1400, `gave up after ${waited.toFixed(0)} ms`);
  assert.equal(db.inTransaction, false);
  assert.equal(Number(db.pragma('busy_timeout', { simple: true })), 200);
  await h.released;
  await h.exited;
  beginImmediateBlocking(db); // free now
  db.exec('ROLLBACK');
  db.close();
});
