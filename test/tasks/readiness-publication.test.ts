// pc_task_publish_readiness from two runners at once, each on its own connection (pool), on both
// backends: the publication never deadlocks (issue 16 "Operating tasks": ER 1213 was seen between
// two idle MariaDB runners) and still deletes long-expired facts.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';

for (const backend of BACKENDS) {
  describe(`readiness publication (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    test('two publishers on their own connections never deadlock, and long-expired facts are deleted', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const stale = Array.from({ length: 5 }, (_, i) => `('tasks:gone-${i}', '2000-01-01 00:00:00.000', '2000-01-01 00:00:15.000')`).join(', ');
      await fx.query(`INSERT INTO pc_durable_task_workers (worker_id, published_at, expires_at) VALUES ${stale}`);
      const a = new TaskStore(fx.openStore() as BaseStore);
      const b = new TaskStore(fx.openStore() as BaseStore);
      const errors: string[] = [];
      const loop = async (tasks: TaskStore, id: string) => {
        for (let i = 0; i < 300; i += 1)
          await tasks.publishReadiness(id, 15_000).catch((e: Error) => {
            errors.push(e.message);
          });
      };
      await Promise.all([loop(a, 'tasks:a'), loop(b, 'tasks:b'), loop(a, 'tasks:c'), loop(b, 'tasks:d')]);
      assert.deepEqual(errors.slice(0, 3), [], `${errors.length} publications failed`);
      const left = (await fx.query('SELECT worker_id FROM pc_durable_task_workers ORDER BY worker_id')).map((r) => String(r.worker_id));
      assert.deepEqual(left, ['tasks:a', 'tasks:b', 'tasks:c', 'tasks:d']);
    });
  });
}
