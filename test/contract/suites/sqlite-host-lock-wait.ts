// Issue 17 item 1: the runtime host's SQLite store (SqliteStore.openHost) never waits for the
// write lock on its event loop. Another real connection holds BEGIN IMMEDIATE: the host's write
// waits asynchronously (timers fire, reads run meanwhile) and commits once the lock is free; past
// its bound it fails with DatabaseBusyError and writes nothing; a transaction callback runs
// exactly once, after its BEGIN IMMEDIATE succeeded.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { DatabaseBusyError } from '../../../src/store/errors.ts';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { createBackend, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';

const B = 'fx.lockwait';

/** Largest gap between 5 ms timer ticks while `work` runs (a blocked loop shows as one long gap). */
async function largestGap<T>(work: Promise<T>): Promise<{ result: T; gapMs: number }> {
  let last = performance.now();
  let gapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gapMs = Math.max(gapMs, now - last);
    last = now;
  }, 5);
  try {
    return { result: await work, gapMs };
  } finally {
    clearInterval(timer);
  }
}

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  if (backend === 'sqlite')
    describe('[sqlite] the host store waits for the write lock asynchronously and within a bound', () => {
      let fx: BackendFixture;
      let file: string;
      let holder: Database.Database;

      before(async () => {
        fx = await createBackend('sqlite');
        file = (fx.target as { file: string }).file;
        await fx.store.markDirty(B, 'seed');
        holder = new Database(file);
      });
      after(async () => {
        if (holder.inTransaction) holder.exec('ROLLBACK');
        holder.close();
        await fx.cleanup();
      });

      test('a write waits without blocking the loop; a read runs meanwhile; the write commits after the release', async () => {
        const host = SqliteStore.openHost(file);
        try {
          holder.exec('BEGIN IMMEDIATE');
          const released = new Promise<void>((resolve) =>
            setTimeout(() => {
              holder.exec('COMMIT');
              resolve();
            }, 1000),
          );
          const write = host.markDirty(B, 'k1');
          const read = await host.readIntent(B, 'seed');
          assert.equal(read?.dirtyGeneration, 1, 'a read is not queued behind the waiting write');
          const { result, gapMs } = await largestGap(write);
          await released;
          assert.equal(result.dirtyGeneration, 1);
          // A synchronous wait would stop the loop for the whole second (the bound leaves room for a loaded host).
          assert.ok(gapMs < 500, `the event loop turned every ${Math.round(gapMs)} ms at most while the write waited`);
          assert.equal((await fx.store.readIntent(B, 'k1'))?.dirtyGeneration, 1);
        } finally {
          await host.close();
        }
      });

      test('past its bound a write fails with DatabaseBusyError and writes nothing; a transaction callback never ran', async () => {
        const host = SqliteStore.openHost(file, { boundMs: 300, busyTimeoutMs: 0 });
        try {
          holder.exec('BEGIN IMMEDIATE');
          const started = performance.now();
          await assert.rejects(
            host.markDirty(B, 'k2'),
            (error: unknown) => error instanceof DatabaseBusyError && error.retryable && error.operation === 'pc_aps_mark_dirty',
          );
          assert.ok(performance.now() - started >= 300);
          let calls = 0;
          await assert.rejects(
            host.transaction(() => {
              calls += 1;
            }),
            DatabaseBusyError,
          );
          assert.equal(calls, 0);
          holder.exec('COMMIT');
          assert.equal(await fx.store.readIntent(B, 'k2'), null, 'nothing was written');
          // Free again: the same store works at once.
          assert.equal((await host.markDirty(B, 'k2')).dirtyGeneration, 1);
        } finally {
          if (holder.inTransaction) holder.exec('ROLLBACK');
          await host.close();
        }
      });

      test('a transaction whose BEGIN IMMEDIATE waited runs its callback exactly once', async () => {
        const host = SqliteStore.openHost(file);
        try {
          holder.exec('BEGIN IMMEDIATE');
          setTimeout(() => holder.exec('COMMIT'), 300);
          let calls = 0;
          const intent = await host.transaction(async (tx) => {
            calls += 1;
            return host.markDirty(B, 'k3', tx);
          });
          assert.equal(calls, 1);
          assert.equal(intent.dirtyGeneration, 1);
        } finally {
          await host.close();
        }
      });

      test('two hundred writes waiting together for a 2 s hold all commit after the release; the loop keeps turning', async () => {
        const host = SqliteStore.openHost(file);
        try {
          holder.exec('BEGIN IMMEDIATE');
          setTimeout(() => holder.exec('COMMIT'), 2000);
          const scopes = Array.from({ length: 200 }, (_, i) => `many${i}`);
          const { result, gapMs } = await largestGap(Promise.all(scopes.map((scope) => host.markDirty(B, scope))));
          assert.equal(result.length, 200);
          assert.ok(result.every((intent) => intent.dirtyGeneration === 1));
          // A synchronous wait would stop the loop for the 2 s hold; 200 commits after it took 699 ms on a loaded CI machine.
          assert.ok(gapMs < 1200, `the event loop turned every ${Math.round(gapMs)} ms at most`);
        } finally {
          await host.close();
        }
      });

      test('a host store opens while another connection holds the write lock', async () => {
        holder.exec('BEGIN IMMEDIATE');
        try {
          const host = SqliteStore.openHost(file);
          assert.equal((await host.readIntent(B, 'seed'))?.dirtyGeneration, 1);
          await host.close();
        } finally {
          holder.exec('COMMIT');
        }
      });
    });
}
