// The recorded mode and the mode switch at the store level, on both backends (RFC 9 "关闭与模式切换",
// acceptance item 11): claim records/matches/refuses, switch refuses a live old-mode lease,
// invalidates the old keys (a stale worker's commit is then rejected), records the new mode and
// leaves requests, dirty marks and checkpoints alone; bounded backlog counts for status.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { StoreError, TermLostError } from '../../src/store/errors.ts';
import { txQuery } from '../../src/store/tx-query.ts';
import { readModeLeases } from '../../src/store/mode-leases.ts';

const BINDING = 'ops_alpha';

for (const backend of BACKENDS) {
  describe(`[${backend}] recorded runtime mode and mode switch`, () => {
    let fx: BackendFixture;
    before(async () => {
      fx = await createBackend(backend);
    });
    after(async () => {
      await fx?.cleanup();
    });

    test('no mode before the first start; the first claim records it, the same mode matches, the other is refused', async () => {
      const initial = await fx.store.readRuntimeMode();
      assert.equal(initial.mode, null);
      assert.equal(initial.maintenance, false);
      const first = await fx.store.claimRuntimeMode('global');
      assert.deepEqual([first.mode, first.outcome], ['global', 'recorded']);
      const again = await fx.store.claimRuntimeMode('global');
      assert.deepEqual([again.mode, again.outcome], ['global', 'matched']);
      await assert.rejects(fx.store.claimRuntimeMode('dedicated'), (e: unknown) => e instanceof StoreError && e.code === 'mode_mismatch');
      assert.equal((await fx.store.readRuntimeMode()).mode, 'global');
      await assert.rejects(fx.store.claimRuntimeMode('other' as 'global'), (e: unknown) => e instanceof StoreError && e.code === 'invalid_argument');
    });

    test('a start during maintenance is refused with maintenance', async () => {
      await fx.query('UPDATE pc_artifact_processing_runtime SET maintenance = 1 WHERE runtime_id = 1');
      try {
        await assert.rejects(fx.store.claimRuntimeMode('global'), (e: unknown) => e instanceof StoreError && e.code === 'maintenance');
        assert.equal((await fx.store.readRuntimeMode()).maintenance, true);
      } finally {
        await fx.query('UPDATE pc_artifact_processing_runtime SET maintenance = 0 WHERE runtime_id = 1');
      }
    });

    test("maintenance pauses dirty marks and explicit triggers (the caller's domain write rolls back with them) and starts; off resumes; a switch ends it", async () => {
      await fx.query('CREATE TABLE ops_domain_rows (scope_id VARCHAR(64) NOT NULL PRIMARY KEY)');
      await fx.store.markDirty(BINDING, 'm1');
      const on = await fx.store.setMaintenance(true);
      assert.deepEqual([on.maintenance, on.changed], [true, true]);
      assert.deepEqual([(await fx.store.setMaintenance(true)).changed], [false], 'turning it on twice changes nothing');
      const isMaintenance = (e: unknown) => e instanceof StoreError && e.code === 'maintenance';
      try {
        await assert.rejects(fx.store.markDirty(BINDING, 'm1'), isMaintenance);
        await assert.rejects(fx.store.acceptRequest(BINDING, 'm2'), isMaintenance);
        await assert.rejects(
          fx.store.transaction(async (tx) => {
            await txQuery(tx, 'INSERT INTO ops_domain_rows (scope_id) VALUES (?)', ['m3']);
            await fx.store.markDirty(BINDING, 'm3', tx);
          }),
          isMaintenance,
        );
        assert.deepEqual(await fx.query('SELECT scope_id FROM ops_domain_rows'), [], 'the domain input and its dirty mark are refused together');
        await assert.rejects(fx.store.claimRuntimeMode('global'), isMaintenance);
        assert.equal((await fx.store.readIntent(BINDING, 'm1'))?.dirtyGeneration, 1, 'nothing was written');
        assert.equal(await fx.store.readIntent(BINDING, 'm2'), null);
      } finally {
        const off = await fx.store.setMaintenance(false);
        assert.deepEqual([off.maintenance, off.changed], [false, true]);
      }
      assert.equal((await fx.store.markDirty(BINDING, 'm1')).dirtyGeneration, 2);
      assert.equal((await fx.store.acceptRequest(BINDING, 'm2')).requestedGeneration, 1);
      await fx.store.setMaintenance(true);
      const mode = (await fx.store.readRuntimeMode()).mode;
      const other = mode === 'dedicated' ? 'global' : 'dedicated';
      await fx.store.switchMode(other);
      assert.equal((await fx.store.readRuntimeMode()).maintenance, false, 'the mode switch ends the maintenance window');
      await fx.store.switchMode(mode ?? 'global');
    });

    test('switch global -> dedicated: invalidates global, keeps intents and checkpoints, fences a stale worker', async () => {
      const term = await fx.store.acquireTerm('global', 'global-host', 1000);
      await fx.store.acceptRequest(BINDING, 'r1');
      await fx.store.markDirty(BINDING, 'd1');
      const scan = await fx.store.beginScan({ supervisorKey: 'global', holderId: term.holderId!, supervisorGeneration: term.supervisorGeneration }, BINDING, {
        kind: 'interval',
        intervalSeconds: 3600,
      });
      await fx.store.finishScan(
        { supervisorKey: 'global', holderId: term.holderId!, supervisorGeneration: term.supervisorGeneration },
        BINDING,
        scan.scanGeneration,
      );
      const stateBefore = await fx.store.readBindingState(BINDING);
      const r1Before = await fx.store.readIntent(BINDING, 'r1');
      const d1Before = await fx.store.readIntent(BINDING, 'd1');

      if (backend === 'mysql') {
        // A live lease of the old mode: refused, nothing changed.
        await assert.rejects(fx.store.switchMode('dedicated'), (e: unknown) => e instanceof StoreError && e.code === 'live_candidate');
        const l = await fx.store.readLease('global');
        assert.deepEqual([l.holderId, l.supervisorGeneration], ['global-host', term.supervisorGeneration]);
        assert.equal((await fx.store.readRuntimeMode()).mode, 'global');
        // The holder crashes: its lease expires (ttl 1 s).
        await waitFor(async () => !(await fx.store.readLease('global')).live, 5_000); // expired on the database clock (ttl 1 s)
      }
      const result = await fx.store.switchMode('dedicated');
      assert.equal(result.mode, 'dedicated');
      assert.deepEqual(
        result.invalidated.map((t) => [t.supervisorKey, t.holderId, t.supervisorGeneration]),
        [['global', null, term.supervisorGeneration + 1]],
      );
      const l = await fx.store.readLease('global');
      assert.deepEqual([l.holderId, l.supervisorGeneration, l.live], [null, term.supervisorGeneration + 1, false]);
      assert.deepEqual(await fx.store.readRuntimeMode().then((m) => [m.mode, m.maintenance]), ['dedicated', false]);

      // A stale worker of the old mode: its fenced commit is rejected.
      await assert.rejects(
        fx.store.transaction(async (tx) => {
          await fx.store.assertTerm(tx, { supervisorKey: 'global', holderId: 'global-host', supervisorGeneration: term.supervisorGeneration });
        }),
        TermLostError,
      );
      await assert.rejects(
        fx.store.ackInvocation(
          { supervisorKey: 'global', holderId: 'global-host', supervisorGeneration: term.supervisorGeneration },
          { bindingName: BINDING, scopeId: 'r1', claimedRequestGeneration: 1 },
        ),
        TermLostError,
      );

      // Requests, dirty marks, checkpoints and scans untouched.
      assert.deepEqual(await fx.store.readIntent(BINDING, 'r1'), r1Before);
      assert.deepEqual(await fx.store.readIntent(BINDING, 'd1'), d1Before);
      const stateAfter = await fx.store.readBindingState(BINDING);
      assert.equal(stateAfter.lastScheduleCheckpointAt?.getTime(), stateBefore.lastScheduleCheckpointAt?.getTime());
      assert.equal(stateAfter.scanGeneration, stateBefore.scanGeneration);

      // Starts: global refused, dedicated accepted; the dedicated term processes the old request.
      await assert.rejects(fx.store.claimRuntimeMode('global'), (e: unknown) => e instanceof StoreError && e.code === 'mode_mismatch');
      assert.equal((await fx.store.claimRuntimeMode('dedicated')).outcome, 'matched');
      const dTerm = await fx.store.acquireTerm('artifact:ops-alpha', 'dedicated-host', 1000);
      const ack = await fx.store.ackInvocation(
        { supervisorKey: 'artifact:ops-alpha', holderId: 'dedicated-host', supervisorGeneration: dTerm.supervisorGeneration },
        { bindingName: BINDING, scopeId: 'r1', claimedRequestGeneration: 1 },
      );
      assert.equal(ack.outcome, 'acknowledged');
    });

    test('and back: dedicated -> global invalidates every artifact key the database holds', async () => {
      const before = await fx.store.readLease('artifact:ops-alpha');
      if (backend === 'mysql') {
        await assert.rejects(fx.store.switchMode('global'), (e: unknown) => e instanceof StoreError && e.code === 'live_candidate');
        await waitFor(async () => !(await fx.store.readLease('artifact:ops-alpha')).live, 5_000); // expired on the database clock (ttl 1 s)
      }
      const result = await fx.store.switchMode('global');
      assert.equal(result.mode, 'global');
      assert.deepEqual(
        result.invalidated.map((t) => [t.supervisorKey, t.holderId, t.supervisorGeneration]),
        [['artifact:ops-alpha', null, before.supervisorGeneration + 1]],
      );
      await assert.rejects(fx.store.claimRuntimeMode('dedicated'), (e: unknown) => e instanceof StoreError && e.code === 'mode_mismatch');
      assert.equal((await fx.store.claimRuntimeMode('global')).outcome, 'matched');
      await assert.rejects(fx.store.switchMode('sideways' as 'global'), (e: unknown) => e instanceof StoreError && e.code === 'invalid_argument');
    });

    // RFC 9 step 2: every term of the old mode the database holds, not only the keys of the
    // families a module lists: a family removed from the module keeps its artifact:<family> key.
    test('a switch to global also fences and detects the key of a family no longer registered', async () => {
      await fx.store.switchMode('dedicated');
      const gone = await fx.store.acquireTerm('artifact:ops-gone', 'gone-host', 1000);
      const stale = { supervisorKey: 'artifact:ops-gone', holderId: 'gone-host', supervisorGeneration: gone.supervisorGeneration };
      if (backend === 'mysql') {
        // Its candidate still runs: the switch is refused, and the read names it.
        await assert.rejects(fx.store.switchMode('global'), (e: unknown) => e instanceof StoreError && e.code === 'live_candidate');
        const leases = await readModeLeases(fx.store, 'dedicated');
        assert.deepEqual(
          leases.filter((l) => l.live).map((l) => [l.supervisorKey, l.holderId]),
          [['artifact:ops-gone', 'gone-host']],
        );
        assert.equal((await fx.store.readRuntimeMode()).mode, 'dedicated');
        await waitFor(async () => !(await fx.store.readLease('artifact:ops-gone')).live, 5_000); // expired on the database clock (ttl 1 s)
      }
      const result = await fx.store.switchMode('global');
      assert.ok(
        result.invalidated.some((t) => t.supervisorKey === 'artifact:ops-gone' && t.supervisorGeneration === gone.supervisorGeneration + 1),
        JSON.stringify(result.invalidated),
      );
      assert.ok(
        result.invalidated.every((t) => t.supervisorKey.startsWith('artifact:')),
        'only old-mode keys',
      );
      await assert.rejects(
        fx.store.transaction(async (tx) => {
          await fx.store.assertTerm(tx, stale);
        }),
        TermLostError,
      );
      assert.deepEqual(
        (await readModeLeases(fx.store, 'global')).map((l) => l.supervisorKey),
        ['global'],
      );
    });

    test('bounded backlog counts', async () => {
      for (let i = 0; i < 5; i += 1) await fx.store.markDirty('ops_count', `k${i}`);
      for (let i = 0; i < 3; i += 1) await fx.store.acceptRequest('ops_count', `k${i}`);
      const full = await fx.store.readFamilyBacklog('ops_count');
      assert.deepEqual([full.owedCount, full.backlogCount, full.countCap], [3, 5, 1_000_000]);
      const capped = await fx.store.readFamilyBacklog('ops_count', 2);
      assert.deepEqual([capped.owedCount, capped.backlogCount], [2, 2]);
      const empty = await fx.store.readFamilyBacklog('ops_none');
      assert.deepEqual([empty.owedCount, empty.backlogCount], [0, 0]);
    });
  });
}
