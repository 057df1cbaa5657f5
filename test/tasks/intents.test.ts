// Domain objects with the intent (ADR: 评估领域对象与 Task intent 同事务创建或关联, and the
// record's shipping-worker verification), real processes on both backends: a submitting process
// whose wake-up publication fails exits; the task and its dataset read back pending (the file
// row linked); a worker started afterwards converges both (succeeded/completed, one attempt,
// owner released), and a failing handler converges its dataset through the failure hook. The
// intent commits or rolls back with the task row.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { REFERENCE_TASKS_MODULE } from '../../src/tasks/load.ts';
import { loadHostTaskRegistry } from '../../src/child/host-import.ts';
import { TaskService } from '../../src/tasks/service.ts';
import { TaskStore, type SubmitResult } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';
import { loadRecorder } from '../helpers/load-record.ts';
import { REFERENCE_TASKS_MODULE as REFERENCE, REPO_ROOT, isTerminal, makeRunner, runCli, startCli, tempDir, waitForTask, processTestHooks } from './harness.ts';
import { ResumeSupersededError } from '../../src/tasks/reference/intents.ts';
import { fixtureChild } from '../helpers/fixture-child.ts';
import { isInstanceOf } from '../../src/child/ts-loader.ts';

function submitChild(fx: BackendFixture, requests: unknown[]): Promise<{ code: number | null; out: string; err: string }> {
  const entry = fixtureChild('test/fixtures/tasks/submit-child.ts');
  const child = spawn(process.execPath, [...entry.args, fx.url, JSON.stringify(requests)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...entry.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
}

async function dataset(fx: BackendFixture, id: string): Promise<{ state: string; generated: number; taskId: number | null } | null> {
  const r = (await fx.query('SELECT state, generated, task_id FROM ref_datasets WHERE dataset_id = ?', [id]))[0];
  return r ? { state: String(r.state), generated: Number(r.generated), taskId: r.task_id === null ? null : Number(r.task_id) } : null;
}

for (const backend of BACKENDS) {
  describe(`domain objects with the task intent (${backend})`, () => {
    const { fixtures, workers, runners } = processTestHooks();

    test('the publication fails and the submitter exits: task and dataset read back pending; a later worker converges both, or fails the dataset through its hook', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      const sub = await submitChild(fx, [
        { taskType: 'generate-dataset', payload: { datasetId: 'ds-ok', items: 3 } },
        { taskType: 'generate-dataset', payload: { datasetId: 'ds-bad', items: 3, failAtItem: 2 } },
      ]);
      assert.equal(sub.code, 0, sub.err);
      const { results, failedPublications } = JSON.parse(sub.out) as { results: SubmitResult[]; failedPublications: number };
      assert.equal(failedPublications, 2, 'both wake-up publications failed');
      const [ok, bad] = results;
      // Through the CLI as well (a process that exits with no worker running).
      const cli = await runCli(fx, ['tasks', 'submit', 'generate-dataset', '--payload', JSON.stringify({ datasetId: 'ds-cli', items: 2 })]);
      assert.equal(cli.code, 0, cli.stderr);
      const viaCli = JSON.parse(cli.stdout) as SubmitResult;
      const file = await runCli(fx, ['tasks', 'submit', 'index-file', '--payload', JSON.stringify({ fileId: 'f-linked', chunks: 2 })]);
      assert.equal(file.code, 0, file.stderr);
      const fileTask = JSON.parse(file.stdout) as SubmitResult;

      for (const [r, id] of [
        [ok, 'ds-ok'],
        [bad, 'ds-bad'],
        [viaCli, 'ds-cli'],
      ] as const) {
        const t = await tasks.read(r.taskId);
        assert.deepEqual([t?.state, t?.attemptCount, t?.attemptOwner], ['pending', 0, null], `task of ${id}`);
        assert.deepEqual(await dataset(fx, id), { state: 'pending', generated: 0, taskId: r.taskId }, `dataset ${id} written with its task`);
      }
      const f = (await fx.query('SELECT state, task_id FROM ref_files WHERE file_id = ?', ['f-linked']))[0];
      assert.deepEqual([f?.state, Number(f?.task_id)], ['uploaded', fileTask.taskId], 'the file row is linked to its task');

      const worker = startCli(fx, ['tasks', 'worker'], { SWEEP_SECONDS: '3600', LEASE_SECONDS: '5' });
      workers.push(worker);
      for (const [r, id, items] of [
        [ok, 'ds-ok', 3],
        [viaCli, 'ds-cli', 2],
      ] as const) {
        const done = await waitForTask(tasks, r.taskId, isTerminal, 60_000);
        assert.deepEqual([done.state, done.attemptCount, done.attemptOwner, done.leaseExpiresAt], ['succeeded', 1, null, null], worker.output());
        assert.deepEqual(await dataset(fx, id), { state: 'completed', generated: items, taskId: r.taskId });
      }
      const failed = await waitForTask(tasks, bad.taskId, isTerminal, 60_000);
      assert.deepEqual([failed.state, failed.attemptCount, failed.attemptOwner], ['failed', 1, null], worker.output());
      assert.deepEqual(await dataset(fx, 'ds-bad'), { state: 'failed', generated: 1, taskId: bad.taskId }, 'the failure hook converged the dataset');
      assert.equal((await waitForTask(tasks, fileTask.taskId, isTerminal, 60_000)).state, 'succeeded');
      assert.equal(String((await fx.query("SELECT state FROM ref_files WHERE file_id = 'f-linked'"))[0].state), 'indexed');
    });

    test('the intent commits and rolls back with the task row; a duplicate submission does not touch the domain row', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      const service = new TaskService(tasks, await loadHostTaskRegistry(REFERENCE_TASKS_MODULE), { maxTimeoutMs: 3_600_000, defaultTimeoutMs: 600_000 });
      // A caller's transaction that rolls back leaves neither the task nor the dataset.
      await assert.rejects(
        service.transaction(async (tx) => {
          await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'ds-rb', items: 2 } }, tx);
          throw new Error('the caller gives up');
        }),
        /the caller gives up/,
      );
      assert.equal(await dataset(fx, 'ds-rb'), null);
      assert.equal(Number((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0].n), 0);
      const first = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'ds-dup', items: 2 } });
      await fx.query("UPDATE ref_datasets SET generated = 1 WHERE dataset_id = 'ds-dup'"); // as a checkpoint would
      const dup = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'ds-dup', items: 5 } });
      assert.deepEqual([dup.outcome, dup.taskId], ['duplicate', first.taskId]);
      assert.deepEqual(await dataset(fx, 'ds-dup'), { state: 'pending', generated: 1, taskId: first.taskId }, 'untouched by the duplicate');
    });

    test('a pending dataset task cancelled from another process does not leave its dataset pending', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      const sub = await runCli(fx, ['tasks', 'submit', 'generate-dataset', '--payload', JSON.stringify({ datasetId: 'ds-cancel', items: 2 })]);
      assert.equal(sub.code, 0, sub.stderr);
      const { taskId } = JSON.parse(sub.stdout) as SubmitResult;
      assert.equal((await dataset(fx, 'ds-cancel'))?.state, 'pending');
      // The failure hook's handler module is imported compiled, as the tasks module is: the
      // command never registers tsx (about a third of a CPU second).
      const recorder = loadRecorder(tempDir('apsup-loads'), 'tsx');
      const cancel = await runCli(fx, ['tasks', 'cancel', String(taskId)], recorder.env);
      assert.equal(cancel.code, 0, cancel.stderr);
      assert.equal((JSON.parse(cancel.stdout) as { outcome: string }).outcome, 'cancelled');
      recorder.assertNoneLoaded();
      assert.equal((await tasks.read(taskId))?.state, 'cancelled');
      assert.deepEqual(await dataset(fx, 'ds-cancel'), { state: 'failed', generated: 0, taskId }, 'converged by the failure hook');
      // A later submission takes the dataset over.
      const again = await runCli(fx, ['tasks', 'submit', 'generate-dataset', '--payload', JSON.stringify({ datasetId: 'ds-cancel', items: 2 })]);
      const next = JSON.parse(again.stdout) as SubmitResult;
      assert.deepEqual(await dataset(fx, 'ds-cancel'), { state: 'pending', generated: 0, taskId: next.taskId });
    });

    test('resume of a failed dataset task is refused once a later resume completed the dataset (nothing written)', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const { tasks, service, runner } = await makeRunner(fx, {}, REFERENCE);
      runners.push(runner);
      await runner.start();
      const first = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'ds-res', items: 3, failAtItem: 2 } });
      assert.equal((await waitForTask(tasks, first.taskId, isTerminal)).state, 'failed');
      const resumed = await service.resume(first.taskId);
      const done = await waitForTask(tasks, resumed.taskId, isTerminal);
      assert.deepEqual([done.state, done.result], ['succeeded', { datasetId: 'ds-res', generated: 3, resumedFrom: 1 }]);
      assert.deepEqual(await dataset(fx, 'ds-res'), { state: 'completed', generated: 3, taskId: resumed.taskId });
      const before = Number((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0].n);

      await assert.rejects(
        service.resume(first.taskId),
        // The reference registry is loaded by path, as a host loads a tasks module: its own copy of the class.
        (e: unknown) => isInstanceOf(e, ResumeSupersededError) && new RegExp(`already completed by task ${resumed.taskId}`).test((e as Error).message),
      );
      const cli = await runCli(fx, ['tasks', 'resume', String(first.taskId)]);
      assert.equal(cli.code, 1, cli.stderr);
      assert.match(cli.stderr, /^apsup: dataset ds-res was already completed by task \d+; task \d+ is not resumed\n$/);
      assert.deepEqual(await dataset(fx, 'ds-res'), { state: 'completed', generated: 3, taskId: resumed.taskId }, 'the completed dataset is not reopened');
      assert.equal(Number((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0].n), before, 'no task was written');
    });
  });
}
