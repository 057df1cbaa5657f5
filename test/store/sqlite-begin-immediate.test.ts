// begin-immediate.ts: a process that may block (worker, task child, CLI) waits for a write lock
// held by another connection in fine steps: it gets the lock within a millisecond or so of its
// release (SQLite's own busy handler sleeps 25-50 ms at a time after the first 100 ms), its
// busy_timeout is restored, and the busy_timeout stays the bound. The holder is another thread.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { beginImmediateBlocking } from '../../src/store/sqlite/begin-immediate.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-begin-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function open(file: string, busyTimeoutMs: number): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  return db;
}

/** A thread that takes the write lock, reports, holds it `holdMs`, commits and reports the release time. */
function holder(file: string, holdMs: number): { held: Promise<unknown>; released: Promise<number>; exited: Promise<unknown>; worker: Worker } {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const db = new (require(workerData.sqlite))(workerData.file);
     db.exec('BEGIN IMMEDIATE');
     db.prepare('INSERT INTO t (v) VALUES (1)').run();
     parentPort.postMessage('held');
     const until = performance.now() + workerData.holdMs;
     while (performance.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
     db.exec('COMMIT');
     parentPort.postMessage(performance.timeOrigin + performance.now());
     db.close();`,
    { eval: true, workerData: { file, holdMs, sqlite: createRequire(import.meta.url).resolve('better-sqlite3') } },
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

test('the wait ends within a few milliseconds of the release (median of 5), and busy_timeout is restored', async () => {
  const file = path.join(dir, 'lag.sqlite');
  const db = open(file, 10_000);
  db.exec('CREATE TABLE t (v INTEGER)');
  const lags: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const h = holder(file, 150);
    await h.held;
    beginImmediateBlocking(db); // blocks this thread until the holder commits
    const acquired = performance.timeOrigin + performance.now();
    db.prepare('INSERT INTO t (v) VALUES (2)').run();
    db.exec('COMMIT');
    lags.push(acquired - (await h.released));
    await h.exited;
  }
  lags.sort((a, b) => a - b);
  // SQLite's busy handler, 150 ms into a wait, probes next at 178 ms: a lag of about 28 ms.
  assert.ok(lags[2]! < 12, `median lag ${lags[2]!.toFixed(1)} ms (all: ${lags.map((l) => l.toFixed(1)).join(', ')})`);
  assert.equal(Number(db.pragma('busy_timeout', { simple: true })), 10_000);
  assert.equal(Number((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n), 10);
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
