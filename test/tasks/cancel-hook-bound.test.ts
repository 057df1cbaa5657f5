// The cancel path's failure hook runs in a bounded transaction (issue 40: it ran unbounded and, on
// SQLite, held the write lock 28 s+). A hook hanging past failureHookTimeoutMs is rolled back at
// the bound: the cancel reports it, the hook's write is gone, and the write lock is free at once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { loadHostTaskRegistry } from '../../src/child/host-import.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TransactionBoundError } from '../../src/tasks/bounded-transaction.ts';
import { TaskService } from '../../src/tasks/service.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { createBackend, type BackendFixture } from '../helpers/backends.ts';
import { withTimeout } from '../helpers/store-asserts.ts';

const REGISTRY = fileURLToPath(new URL('../fixtures/tasks/cancel-registry.ts', import.meta.url));
const BOUND_MS = 500;

describe('[sqlite] a cancelled task’s failure hook is bounded', () => {
  let fx: BackendFixture;
  let dir: string;
  after(async () => {
    if (dir) fs.rmSync(path.join(dir, 'hang'), { force: true }); // the abandoned hook ends
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a hook hanging past the bound is rolled back; the write lock is released', async () => {
    fx = await createBackend('sqlite');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-cancel-hook-'));
    const hang = path.join(dir, 'hang');
    fs.writeFileSync(hang, '');
    await fx.query("INSERT INTO ref_files (file_id) VALUES ('f-cancel')");
    const tasks = new TaskStore(fx.store as BaseStore);
    const service = new TaskService(tasks, await loadHostTaskRegistry(REGISTRY), {
      maxTimeoutMs: 60_000,
      defaultTimeoutMs: 30_000,
      failureHookTimeoutMs: BOUND_MS,
    });
    const { taskId } = await service.submit({ taskType: 'fx-cancel-hook', payload: { rowId: 'f-cancel', hookHangFile: hang } });
    const row = async () => (await fx.query("SELECT state, task_id, error FROM ref_files WHERE file_id = 'f-cancel'"))[0];
    assert.deepEqual(await row(), { state: 'indexing', task_id: taskId, error: null });

    // A guard only (an unbounded hook would hang here until its file goes).
    const error = await withTimeout(service.cancel(taskId), 30_000, 'the cancel').then(
      () => null,
      (e: unknown) => e as Error,
    );
    assert.ok(error, 'the cancel reports the hook that did not finish');
    assert.ok(error.cause instanceof TransactionBoundError, String(error));
    // The lock is free while the hook still hangs: another connection writes without waiting.
    const other = new Database((fx.target as { file: string }).file);
    try {
      other.pragma('busy_timeout = 0');
      other.exec('BEGIN IMMEDIATE');
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    assert.deepEqual(await row(), { state: 'indexing', task_id: taskId, error: null }, "the hook's write was rolled back");
    assert.equal((await tasks.read(taskId))?.state, 'cancelled', 'the cancel itself committed before the hook');
  });
});
