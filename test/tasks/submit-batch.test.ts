// TaskService.submitBatch (issue 12 item 4) on both backends, with the reference task types:
// every item is validated before anything is written, the intent hooks of the created tasks
// write their domain rows in the same transaction (a duplicate touches nothing), the caller's
// transaction rolls everything back with it, and one wake-up (and one publication) follows the
// commit.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { InvalidArgumentError } from '../../src/store/errors.ts';
import { REFERENCE_TASKS_MODULE } from '../../src/tasks/load.ts';
import { loadHostTaskRegistry } from '../../src/child/host-import.ts';
import { TaskService } from '../../src/tasks/service.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] TaskService.submitBatch`, () => {
    const fixtures: BackendFixture[] = [];
    after(async () => {
      for (const fx of fixtures) await fx.cleanup();
    });

    test('validated first, intent hooks in the transaction, duplicates touch nothing, one wake-up', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      const service = new TaskService(tasks, await loadHostTaskRegistry(REFERENCE_TASKS_MODULE), { maxTimeoutMs: 3_600_000, defaultTimeoutMs: 600_000 });
      let wakeups = 0;
      const published: string[] = [];
      service.onSubmitted = () => {
        wakeups += 1;
      };
      service.notifier = {
        publish: (_topic, payload) => {
          published.push(payload);
        },
      };
      const dataset = async (id: string) => (await fx.query('SELECT state, task_id FROM ref_datasets WHERE dataset_id = ?', [id]))[0] ?? null;
      const taskCount = async () => Number(Object.values((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0])[0]);

      await assert.rejects(
        service.submitBatch([
          { taskType: 'generate-dataset', payload: { datasetId: 'ds-1', items: 2 } },
          { taskType: 'generate-dataset', payload: { datasetId: '', items: 2 } },
        ]),
        InvalidArgumentError,
      );
      assert.equal(await taskCount(), 0);
      assert.equal(await dataset('ds-1'), null);

      const r = await service.submitBatch([
        { taskType: 'generate-dataset', payload: { datasetId: 'ds-1', items: 2 } },
        { taskType: 'generate-dataset', payload: { datasetId: 'ds-1', items: 2 } },
        { taskType: 'generate-dataset', payload: { datasetId: 'ds-2', items: 1 } },
      ]);
      assert.deepEqual(
        r.map((x) => x.outcome),
        ['created', 'duplicate', 'created'],
      );
      assert.equal(r[1].taskId, r[0].taskId);
      assert.deepEqual({ ...(await dataset('ds-1')) }, { state: 'pending', task_id: r[0].taskId });
      assert.equal(Number((await dataset('ds-2'))!.task_id), r[2].taskId);
      assert.equal(wakeups, 1);
      assert.deepEqual(published, [String(r[0].taskId)]);

      await assert.rejects(
        service.transaction(async (tx) => {
          await service.submitBatch([{ taskType: 'generate-dataset', payload: { datasetId: 'ds-3', items: 1 } }], tx);
          throw new Error('caller rolls back');
        }),
        /caller rolls back/,
      );
      assert.equal(await dataset('ds-3'), null);
      assert.equal(await taskCount(), 2);
      assert.equal(wakeups, 1, 'no wake-up for a rolled-back transaction');
    });
  });
}
