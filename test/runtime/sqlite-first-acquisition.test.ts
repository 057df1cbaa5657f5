// Issue 17 item 6 (RFC 8): a SQLite host whose first term acquisition fails (another connection
// holds the write lock past the host's busy timeout) keeps trying with a bounded backoff,
// reports `starting` in readiness meanwhile, and leads once the lock is free: an accepted request
// is handled.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { createLogger } from '../../src/logging.ts';
import { PersistedFacts } from '../../src/observability/facts.ts';
import { buildReadiness } from '../../src/observability/readiness.ts';
import { LEASE_MESSAGES } from '../../src/runtime/lease-events.ts';
import { Runtime } from '../../src/runtime/runtime.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { FIXTURES_DIR, bindingOf, createFixtureTables, intentOf, runtimeConfig, sinkDestination, testFamily } from '../fixtures/runtime-harness.ts';

const F = 'fx-first';
const ACKNOWLEDGING = `${FIXTURES_DIR}/processors/acknowledging.ts`;

describe('[sqlite] a failed first term acquisition is retried until the host leads', () => {
  let fx: BackendFixture;
  let runtime: Runtime | null = null;
  let holder: Database.Database | null = null;
  const logs: Array<Record<string, unknown>> = [];

  before(async () => {
    fx = await createBackend('sqlite');
    await createFixtureTables(fx);
  });
  after(async () => {
    if (holder?.inTransaction) holder.exec('ROLLBACK');
    holder?.close();
    await runtime?.stop();
    await fx?.cleanup();
  });

  test('the host stays starting while the lock is held, then takes the term and handles the request', async () => {
    await fx.store.acceptRequest(bindingOf(F), 's1');
    const file = (fx.target as { file: string }).file;
    // A real second connection takes the write lock before the host's first acquisition.
    holder = new Database(file);
    holder.exec('BEGIN IMMEDIATE');
    const config = runtimeConfig(fx, [testFamily(F, { processorModule: ACKNOWLEDGING, maxWorkers: 1 })]);
    const logger = createLogger({ level: 'info', destination: sinkDestination(logs) });
    // The host's store (as Runtime opens it) gives up after 200 ms of lock waiting (the lock is held far longer).
    runtime = new Runtime(config, logger, { store: SqliteStore.openHost(file, { boundMs: 200, busyTimeoutMs: 0 }) });
    await runtime.start();
    const failures = () => logs.filter((l) => l.msg === LEASE_MESSAGES.acquisitionFailed && l.errorType === 'DatabaseBusyError').length;
    // Held past several attempts: every one fails, and the host keeps trying.
    await waitFor(() => failures() >= 3, 10_000);
    assert.equal(runtime.status().supervisors[0].state, 'starting');
    const doc = await buildReadiness(runtime, new PersistedFacts(runtime));
    assert.equal(doc.ready, false);
    assert.deepEqual(doc.artifact_processing_supervisor.supervisors, [{ supervisorKey: 'global', state: 'starting' }]);
    assert.equal((await intentOf(fx, F, 's1'))?.handledGeneration, 0);

    holder.exec('COMMIT');
    await waitFor(() => runtime!.status().supervisors[0].state === 'leader', 10_000);
    await waitFor(async () => (await intentOf(fx, F, 's1'))?.handledGeneration === 1, 20_000);
    const lease = await fx.store.readLease('global');
    assert.equal(lease.holderId, runtime.holderId);
  });
});
