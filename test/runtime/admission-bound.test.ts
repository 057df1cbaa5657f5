// Issue 17 item 5 (RFC 2 "单次查询…固定上限"): the admission page statement is bounded by
// configuration (ready queue + budget), whatever the number of keys in backoff. 10,000 keys fail
// once and wait in retry-wait (backoff 60 s); the next automatic scan's pages carry the same
// exclusion list as the first page of the first scan (nothing ready or running: empty), and no
// key in retry-wait is dispatched again before its backoff ends.
//
// The family partition runs on a real store; its worker pool is replaced by one that fails every
// invocation at once (10,000 real worker processes would only slow the test: the subject is the
// statement the partition sends and what it dispatches, not the workers).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { FamilyPartition } from '../../src/runtime/family-partition.ts';
import type { WorkerOutcome } from '../../src/runtime/worker-outcome.ts';
import type { WorkerPool } from '../../src/runtime/worker-pool.ts';
import type { Term } from '../../src/store/types.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { P, bindingOf, runtimeConfig, testFamily } from '../fixtures/runtime-harness.ts';
import { lazyReadHandle, openReadHandle } from '../../src/store/read-handle.ts';

const F = 'fx-bound';
const KEYS = 10_000;
const READY = 100;
const BUDGET = 20;
const BACKOFF_MS = 60_000;

interface Page {
  generation: number;
  excluded: number;
  chars: number;
  inBackoff: number;
}

for (const backend of BACKENDS) {
  describe(`[${backend}] admission pages stay bounded with ${KEYS} keys in backoff`, () => {
    let fx: BackendFixture;
    let partition: FamilyPartition | null = null;

    before(async () => {
      fx = await createBackend(backend);
    });
    after(async () => {
      await partition?.close();
      await fx?.cleanup();
    });

    test('the page statement does not grow; retry-wait keys wait for their backoff', { timeout: 300_000 }, async () => {
      const binding = bindingOf(F);
      const scopes = Array.from({ length: KEYS }, (_, i) => `k${String(i).padStart(5, '0')}`);
      for (let i = 0; i < scopes.length; i += 1000) await fx.store.markDirtyBatch(binding, scopes.slice(i, i + 1000));
      const acquired = await fx.store.acquireTerm('global', 'bound-host', 600_000);
      const term: Term = { supervisorKey: 'global', holderId: 'bound-host', supervisorGeneration: acquired.supervisorGeneration };

      const pages: Page[] = [];
      const store = fx.store;
      const admit = store.admitScanPage.bind(store);
      store.admitScanPage = (t, b, generation, afterSequence, limit, exclude) => {
        const list = [...(exclude ?? [])];
        pages.push({ generation, excluded: list.length, chars: list.join(',').length, inBackoff: partition?.stats().retryWait ?? 0 });
        return admit(t, b, generation, afterSequence, limit, list);
      };
      const runs = new Map<string, number[]>();
      const pool = {
        processCount: 0,
        spawned: 0,
        async run(scopeId: string): Promise<WorkerOutcome> {
          runs.set(scopeId, [...(runs.get(scopeId) ?? []), Date.now()]);
          return { status: 'failed', durationMs: 1, pid: 0, error: { name: 'Error', message: 'scripted failure' } } as WorkerOutcome;
        },
        async terminateBusy() {},
        async close() {},
      } as unknown as WorkerPool;

      const config = runtimeConfig(fx, [testFamily(F, { maxWorkers: BUDGET, schedule: { kind: 'interval', seconds: 1 } })], {
        [`${P}ARTIFACT_PROCESSING_READY_QUEUE_SIZE`]: String(READY),
      });
      // A small supervisor loop: examine whenever the partition asks for it or is due.
      let examining = false;
      let again = false;
      let failedExamination: unknown = null;
      const wake = (): void => {
        if (examining) {
          again = true;
          return;
        }
        examining = true;
        setImmediate(() => {
          const p = partition!;
          const run = p.wantsExamination(Date.now()) ? p.examine(term) : Promise.resolve();
          run
            .catch((error: unknown) => {
              failedExamination = error;
            })
            .finally(() => {
              examining = false;
              if (again) {
                again = false;
                wake();
              }
            });
        });
      };
      partition = new FamilyPartition(
        config.families[0],
        store,
        pool,
        {
          readyQueueSize: READY,
          scanPageSize: 500,
          retryBaseMs: BACKOFF_MS,
          retryMaxMs: BACKOFF_MS,
          conflictRetryMs: 100,
          discoveryTimeoutMs: 10_000,
        },
        { wake, termLost: () => undefined, currentTerm: () => term, providerRead: lazyReadHandle(fx.backend, () => openReadHandle(fx.target)) },
        createLogger({ level: 'silent' }),
      );
      const ticker = setInterval(wake, 50); // stands in for the supervisor's deadline timers
      try {
        wake();
        // Every key failed once and waits in retry-wait.
        await waitFor(() => partition!.stats().retryWait === KEYS && partition!.stats().running === 0, 240_000, 50);
        const firstScan = pages.filter((p) => p.generation === pages[0].generation);
        assert.equal(firstScan[0].excluded, 0, 'the first page of the first scan excludes nothing');
        // A later scan runs over the same 10,000 keys, all of them in retry-wait.
        const full = (p: Page) => p.generation > firstScan[0].generation && p.inBackoff === KEYS;
        await waitFor(() => pages.some(full) && !partition!.stats().scanInProgress, 120_000, 50);
        assert.equal(failedExamination, null);
        const later = pages.filter(full);
        console.log(
          `[${backend}] first scan: ${firstScan.length} pages, exclusion up to ${Math.max(...firstScan.map((p) => p.excluded))} ids; ` +
            `pages with ${KEYS} keys in retry-wait: ${later.length}, exclusion up to ${Math.max(...later.map((p) => p.excluded))} ids / ${Math.max(...later.map((p) => p.chars))} chars`,
        );
        for (const p of pages) assert.ok(p.excluded <= READY + BUDGET, `a page excluded ${p.excluded} ids (bound ${READY + BUDGET})`);
        for (const p of later) {
          assert.equal(p.excluded, firstScan[0].excluded, 'the page statement is unchanged in size');
          assert.equal(p.chars, firstScan[0].chars);
        }
        // No key was dispatched again before its backoff (60 s) ended.
        assert.equal(runs.size, KEYS);
        for (const [scope, times] of runs) assert.equal(times.length, 1, `${scope} ran ${times.length} times within its backoff`);
        assert.equal(partition.stats().retryWait, KEYS);
        // The owed requests were reused: each key owes exactly its one request.
        const owed = await fx.query(
          'SELECT COUNT(*) AS n FROM pc_artifact_processing_intents WHERE binding_name = ? AND requested_generation = handled_generation + 1 AND requested_generation = 1',
          [binding],
        );
        assert.equal(Number(owed[0].n), KEYS);
      } finally {
        clearInterval(ticker);
      }
    });
  });
}
