/**
 * BEGIN IMMEDIATE for the connections that may block (task and worker children, CLI): the wait
 * for a write lock taken by another process, in sub-millisecond steps. SQLite's own busy handler
 * sleeps 1, 2, 5, 10 ms... between probes, so a process that collides with a 0.2 ms commit of
 * another one loses several milliseconds (issue 12: a third of a no-op task's time). The host
 * never blocks: it uses lock-wait.ts instead.
 *
 * The connection's busy_timeout is set to 0 for the probes and restored after, so every other
 * statement keeps its ordinary busy_timeout, which also stays the bound: after it the last
 * SQLITE_BUSY is thrown, as SQLite would have done.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { isSqliteBusy } from './lock-wait.ts';

const SLEEPER = new Int32Array(new SharedArrayBuffer(4));
const FIRST_WAIT_MS = 0.05;
const MAX_WAIT_MS = 1;

interface Pragmas {
  noWait: BetterSqlite3.Statement;
  restore: BetterSqlite3.Statement;
  boundMs: number;
}
const pragmas = new WeakMap<BetterSqlite3.Database, Pragmas>();

/** Blocks (the process's thread) for about ms milliseconds. */
function sleep(ms: number): void {
  Atomics.wait(SLEEPER, 0, 0, ms);
}

export function beginImmediateBlocking(db: BetterSqlite3.Database): void {
  let p = pragmas.get(db);
  if (!p) {
    const timeout = Number(db.pragma('busy_timeout', { simple: true }));
    p = { noWait: db.prepare('PRAGMA busy_timeout = 0'), restore: db.prepare(`PRAGMA busy_timeout = ${timeout}`), boundMs: timeout };
    pragmas.set(db, p);
  }
  p.noWait.run();
  try {
    let started = 0;
    for (let wait = FIRST_WAIT_MS; ; wait = Math.min(MAX_WAIT_MS, wait * 2)) {
      try {
        db.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isSqliteBusy(error)) throw error;
        started ||= performance.now();
        if (performance.now() - started >= p.boundMs) throw error;
      }
      sleep(wait);
    }
  } finally {
    p.restore.run();
  }
}
