// Schedule and automatic scan (RFC 4, RFC 2) without a database: the database's answer decides
// due / not due (its clock, here a scripted dbNow), the local estimate only arms a timer (the
// ManualClock); pages are admitted while the ready queue has room, ready and running keys are
// excluded, a stale scan is forgotten and checked again, and cron fires are merged to the latest.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ScheduleScan } from '../../src/runtime/schedule-scan.ts';
import { cronFireAfter, cronFireAtOrBefore } from '../../src/schedule/cron.ts';
import { KeyStateTable } from '../../src/runtime/key-states.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { ScanStaleError } from '../../src/store/errors.ts';
import { createLogger } from '../../src/logging.ts';
import type { SchedulePolicyDecl } from '../../src/registry/registration.ts';
import type { SchedulePolicy, Store } from '../../src/store/types.ts';

const logger = createLogger({ level: 'silent' });
const term = { supervisorKey: 'global', holderId: 'h', supervisorGeneration: 1 };

function fakeStore(options: { due: boolean; keys: number; dbNow: Date; stale?: boolean }) {
  const calls: string[] = [];
  const excluded: string[][] = [];
  const policies: SchedulePolicy[] = [];
  const store = {
    async readBindingState() {
      return { dbNow: options.dbNow };
    },
    async beginScan(_t: unknown, _b: string, policy: SchedulePolicy) {
      calls.push('begin');
      policies.push(policy);
      const nextDueAt = new Date(options.dbNow.getTime() + 60_000);
      return { outcome: options.due ? 'started' : 'not_due', scanGeneration: 7, scanUpperPendingSequence: options.keys, nextDueAt, dbNow: options.dbNow };
    },
    async admitScanPage(_t: unknown, _b: string, _g: number, after: number, limit: number, exclude: string[]) {
      calls.push(`page ${after}`);
      excluded.push([...exclude]);
      if (options.stale) throw new ScanStaleError('scan generation moved on');
      const keys = [];
      for (let s = after + 1; s <= Math.min(options.keys, after + limit); s += 1) keys.push({ scopeId: `k${s}`, pendingSequence: s });
      return { keys, nextAfterSequence: after + keys.length, exhausted: after + keys.length >= options.keys };
    },
    async finishScan() {
      calls.push('finish');
      return { scanGeneration: 7 };
    },
  } as unknown as Store;
  return { store, calls, excluded, policies };
}

function setup(schedule: SchedulePolicyDecl, store: Store, queue = 4) {
  const clock = new ManualClock({ wall: Date.parse('2026-01-01T00:00:00Z') });
  const table = new KeyStateTable(queue);
  const notified: number[] = [];
  const scan = new ScheduleScan(
    'b',
    'f',
    schedule,
    { scanPageSize: 100, readyQueueSize: queue },
    {
      store,
      table,
      enqueue: (id) => table.enqueue(id, 'scan'),
      notifyRequest: (seq) => notified.push(seq),
      calibrated: () => true,
      hasBudget: () => true,
      wake: () => undefined,
    },
    clock,
    logger,
  );
  return { clock, table, scan, notified };
}

describe('ScheduleScan', () => {
  test("not due: the database's next due time becomes a local wake-up; due again only once the clock reaches it", async () => {
    const dbNow = new Date('2026-01-01T00:00:00Z');
    const f = fakeStore({ due: false, keys: 0, dbNow });
    const s = setup({ kind: 'interval', seconds: 60 }, f.store);
    assert.equal(s.scan.due(s.clock.now()), true, 'the first check is always asked');
    await s.scan.maybeAdvance(term, s.clock.now());
    assert.deepEqual(f.calls, ['begin']);
    assert.deepEqual(f.policies, [{ kind: 'interval', intervalSeconds: 60 }]);
    assert.equal(s.scan.due(s.clock.now()), false);
    assert.equal(s.scan.wakeAt(false), s.clock.now() + 60_000);
    assert.equal(s.scan.wakeAt(true), null, 'a calibration in flight wakes the loop itself');
    s.scan.notifyDirty();
    assert.equal(s.scan.due(s.clock.now()), false, 'a dirty mark does not make a checked family due');
    await s.clock.advance(60_000);
    assert.equal(s.scan.due(s.clock.now()), true);
  });

  test('a started scan admits pages into the free room, excluding ready and running keys, and finishes when exhausted', async () => {
    const f = fakeStore({ due: true, keys: 6, dbNow: new Date() });
    const s = setup({ kind: 'interval', seconds: 60 }, f.store, 4);
    s.table.enqueue('busy', 'request');
    await s.scan.maybeAdvance(term, s.clock.now());
    assert.equal(s.scan.inProgress, true, 'the queue filled before the scan ended');
    assert.deepEqual(s.table.keys('ready'), ['busy', 'k1', 'k2', 'k3']);
    assert.deepEqual(f.excluded[0], ['busy']);
    for (const key of s.table.keys('ready')) s.table.startNext(() => ({ workerId: key, term, generation: 0 }));
    await s.scan.maybeAdvance(term, s.clock.now());
    assert.deepEqual(f.calls, ['begin', 'page 0', 'page 3', 'finish']);
    assert.deepEqual(f.excluded[1], ['busy', 'k1', 'k2', 'k3'], 'running keys are excluded too');
    assert.equal(s.scan.inProgress, false);
  });

  test('a stale scan is forgotten and the schedule asked again', async () => {
    const f = fakeStore({ due: true, keys: 3, dbNow: new Date(), stale: true });
    const s = setup({ kind: 'interval', seconds: 60 }, f.store);
    await s.scan.maybeAdvance(term, s.clock.now());
    assert.equal(s.scan.inProgress, false);
    assert.equal(s.scan.due(s.clock.now()), true);
  });

  test('schedule off: an unfinished scan is ended, nothing admitted', async () => {
    const f = fakeStore({ due: true, keys: 3, dbNow: new Date() });
    const s = setup({ kind: 'off' }, f.store);
    await s.scan.maybeAdvance(term, s.clock.now());
    assert.deepEqual(f.calls, ['begin', 'finish']);
    assert.equal(s.table.count('ready'), 0);
    assert.equal(s.scan.wakeAt(false), null);
  });

  test('cron: the policy names the latest fire at or before the database time; the next fire arms the timer', async () => {
    const dbNow = new Date('2026-03-02T10:30:00Z'); // 18:30 in Shanghai
    const f = fakeStore({ due: false, keys: 0, dbNow });
    const s = setup({ kind: 'cron', expression: '0 18 * * *', timezone: 'Asia/Shanghai' }, f.store);
    await s.scan.maybeAdvance(term, s.clock.now());
    assert.deepEqual(f.policies, [{ kind: 'cron', fireAt: new Date('2026-03-02T10:00:00Z') }]);
    const offset = s.clock.now() - dbNow.getTime();
    assert.equal(s.scan.wakeAt(false), Date.parse('2026-03-03T10:00:00Z') + offset);
    assert.equal(cronFireAtOrBefore('0 18 * * *', 'UTC', new Date('2026-03-02T18:00:00Z')).toISOString(), '2026-03-02T18:00:00.000Z', 'a fire at dbNow counts');
    assert.equal(cronFireAfter('0 18 * * *', 'UTC', new Date('2026-03-02T18:00:00Z')).toISOString(), '2026-03-03T18:00:00.000Z');
  });

  test('admission is batched: with half a queue of scan keys ready, the next page waits for half a queue of room', () => {
    const f = fakeStore({ due: true, keys: 0, dbNow: new Date() });
    const s = setup({ kind: 'interval', seconds: 60 }, f.store, 4);
    s.table.enqueue('a', 'scan');
    s.table.enqueue('b', 'scan');
    s.table.enqueue('c', 'request');
    assert.equal(s.scan.admissionRoom(), false, 'room 1 < threshold 2 and 2 scan keys ready');
    const t = setup({ kind: 'interval', seconds: 60 }, f.store, 4);
    t.table.enqueue('a', 'request');
    t.table.enqueue('b', 'request');
    t.table.enqueue('c', 'scan');
    assert.equal(t.scan.admissionRoom(), true, 'below its share the scan takes any room');
  });
});
