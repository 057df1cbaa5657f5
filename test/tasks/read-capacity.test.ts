// pc_task_read_capacity on both backends: the database claim cap (4 after migrate up, ADR T6)
// and the running tasks against it, following claims, ends and set-capacity.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] pc_task_read_capacity`, () => {
    let fx: BackendFixture;
    after(async () => {
      await fx?.cleanup();
    });

    test('cap and running count follow claims, ends and set-capacity', async () => {
      fx = await createBackend(backend);
      const tasks = new TaskStore(fx.store as BaseStore);
      const first = await tasks.readCapacity();
      assert.equal(first?.capacity, 4);
      assert.equal(first?.running, 0);
      assert.ok(first!.dbNow instanceof Date && !Number.isNaN(first!.dbNow.getTime()));
      for (let i = 0; i < 3; i += 1) await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: {}, timeoutMs: 60_000 });
      const a = (await tasks.claim('w1', 60_000, ['fx-sleep']))!;
      await tasks.claim('w1', 60_000, ['fx-sleep']);
      assert.equal((await tasks.readCapacity())?.running, 2);
      await tasks.succeed(a.taskId, a.attemptToken, null);
      assert.equal((await tasks.readCapacity())?.running, 1);
      await tasks.setCapacity(9);
      assert.deepEqual({ ...(await tasks.readCapacity()), dbNow: null }, { capacity: 9, running: 1, dbNow: null });
    });
  });
}
