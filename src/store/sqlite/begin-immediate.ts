/**
 * BEGIN IMMEDIATE for the connections that may block (task and worker children, CLI): the wait
 * for a write lock taken by another process starts in sub-millisecond steps, then goes on in
 * SQLite's own busy handler. That handler sleeps 1, 2, 5, 10 ms... between probes, so a process
 * that collides with a 0.2 ms commit of another one would lose milliseconds (issue 12); but
 * probing every millisecond for longer costs the holder its CPU when many processes contend
 * (bench/RESULTS.md run 25: 8 processes committing, 5 to 20 % fewer commits). So the first
 * FINE_STEPS_MS are probed finely and the rest of the bound waits in SQLite. The host never
 * blocks: it uses lock-wait.ts instead.
 *
 * The connection's busy_timeout is set for the wait and restored after, so every other
 * statement keeps its ordinary busy_timeout, which also stays the bound: after it the last
 * SQLITE_BUSY is thrown, as SQLite would have done.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { isSqliteBusy } from './lock-wait.ts';

const SLEEPER = new Int32Array(new SharedArrayBuffer(4));
const FIRST_WAIT_MS = 0.05;
/** Fine probes (0.05, 0.1, 0.2, 0.4, 0.8 ms apart) cover this much of a wait. */
const FINE_STEPS_MS = 1.5;

/** Blocks (the process's thread) for about ms milliseconds. */
export function blockingSleep(ms: number): void {
  Atomics.wait(SLEEPER, 0, 0, ms);
}

/** `sleep` is the pause between probes (tests pass one that records the steps). */
export function beginImmediateBlocking(db: BetterSqlite3.Database, sleep: (ms: number) => void = blockingSleep): void {
  // Read at each call (a few µs): the restore puts back whatever the connection has now.
  const boundMs = Number(db.pragma('busy_timeout', { simple: true }));
  // exec, not a prepared statement: PRAGMA busy_timeout takes effect when it is compiled, so a
  // cached statement's later runs may leave the other value in place (the probes then waited in
  // SQLite's own busy handler).
  db.exec('PRAGMA busy_timeout = 0');
  try {
    const started = performance.now();
    let slept = 0;
    for (let wait = FIRST_WAIT_MS; ; wait *= 2) {
      try {
        db.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isSqliteBusy(error)) throw error;
        if (performance.now() - started >= boundMs) throw error;
      }
      if (slept >= FINE_STEPS_MS) break;
      sleep(wait);
      slept += wait;
    }
    // The rest of the bound in SQLite's busy handler (exec, for the reason above).
    db.exec(`PRAGMA busy_timeout = ${Math.max(1, Math.ceil(boundMs - (performance.now() - started)))}`);
    db.exec('BEGIN IMMEDIATE');
  } finally {
    db.exec(`PRAGMA busy_timeout = ${boundMs}`);
  }
}
