// Dispatch and settlement of invocations (RFC 5, 6, 7) without a database or worker processes:
// an 'ok' is done only with its committed acknowledgement (a deferred one is committed by the
// supervisor while the key settles and its budget slot is free), an outcome is never a failure
// when the database shows the acknowledgement, a conflict waits without counting, a failure
// enters retry-wait with its backoff (on the clock) and the trigger that first brought the key in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Invoker } from '../../src/runtime/invocation.ts';
import { KeyStateTable } from '../../src/runtime/key-states.ts';
import { OwedDiscovery } from '../../src/runtime/owed-discovery.ts';
import { BackoffIndex } from '../../src/runtime/backoff.ts';
import { FamilyHealth } from '../../src/runtime/family-health.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { createLogger } from '../../src/logging.ts';
import type { WorkerOutcome } from '../../src/runtime/worker-outcome.ts';
import type { IntentSnapshot, Store } from '../../src/store/types.ts';

const term = { supervisorKey: 'global', holderId: 'h', supervisorGeneration: 1 };
const flush = async () => {
  for (let i = 0; i < 5; i += 1) await new Promise((r) => setImmediate(r));
};

function intent(requested: number, handled: number): IntentSnapshot {
  return { requestedGeneration: requested, handledGeneration: handled, dirtyGeneration: 1, cleanGeneration: 0, pendingSequence: 5 } as IntentSnapshot;
}

/** `afterAckCommit`: runs after the stub's acknowledgement committed, before the row it returns reaches the invoker. */
function setup(
  outcomes: Array<WorkerOutcome | (() => Promise<WorkerOutcome>)>,
  intents: Record<string, IntentSnapshot>,
  afterAckCommit?: (scopeId: string) => Promise<void>,
) {
  const clock = new ManualClock();
  const table = new KeyStateTable(10);
  const backoff = new BackoffIndex({ baseMs: 1_000, maxMs: 10_000, conflictMs: 100, jitter: 0, random: () => 0.5 });
  const health = new FamilyHealth();
  const acks: string[] = [];
  let hold: Promise<void> = Promise.resolve();
  const store = {
    async readIntent(_b: string, id: string) {
      return intents[id] ?? null;
    },
    async readIntents(_b: string, ids: string[]) {
      return ids.map((id) => intents[id] ?? null);
    },
    async acknowledge(_t: unknown, request: { scopeId: string; cleanThroughDirtyGeneration: number | null }) {
      await hold;
      acks.push(`${request.scopeId}:${request.cleanThroughDirtyGeneration}`);
      const i = intents[request.scopeId];
      i.handledGeneration = i.requestedGeneration;
      const committed = { ...i, bindingName: 'b', scopeId: request.scopeId, outcome: 'acknowledged' };
      await afterAckCommit?.(request.scopeId);
      return committed;
    },
  } as unknown as Store;
  const pool = {
    run: async () => {
      const next = outcomes.shift()!;
      return typeof next === 'function' ? next() : next;
    },
  };
  const notified: Array<number | undefined> = [];
  let lost = 0;
  const invoker = new Invoker({
    family: 'f',
    bindingName: 'b',
    budget: 1,
    store,
    pool,
    table,
    backoff,
    health,
    hooks: {
      wake: () => undefined,
      termLost: () => {
        lost += 1;
      },
      currentTerm: () => term,
    },
    enqueue: (id, source) => table.enqueue(id, source),
    notifyRequest: (s) => notified.push(s),
    clock,
    logger: createLogger({ level: 'silent' }),
  });
  return {
    clock,
    table,
    backoff,
    health,
    invoker,
    acks,
    notified,
    lost: () => lost,
    holdAcks: (p: Promise<void>) => {
      hold = p;
    },
  };
}

const ok = (generations: { requestedGeneration: number; handledGeneration: number }): WorkerOutcome => ({
  status: 'ok',
  durationMs: 1,
  pid: 1,
  acknowledgement: { kind: 'committed', generations: { ...generations, dirtyGeneration: 1, cleanGeneration: 1 } },
});

describe('Invoker', () => {
  test('a committed acknowledgement settles the key; a newer request gets one successor', async () => {
    // The successor's worker never returns: it stays running.
    const s = setup([ok({ requestedGeneration: 2, handledGeneration: 1 }), () => new Promise<WorkerOutcome>(() => undefined)], { k: intent(1, 0) });
    s.table.enqueue('k', 'request');
    s.invoker.dispatch();
    assert.equal(s.table.get('k')?.mode, 'running');
    assert.equal(s.invoker.hasBudget(), false);
    await flush();
    // The freed slot starts the queued successor at once (no examination needed).
    assert.equal(s.table.get('k')?.mode, 'running', 'the successor is queued and started');
    assert.equal((s.table.get('k') as { invocation: { source: string } }).invocation.source, 'successor');
    assert.equal(s.invoker.invocations, 2);
  });

  test('a deferred acknowledgement frees the budget slot while it is committed; the key stays busy', async () => {
    const s = setup([{ status: 'ok', durationMs: 1, pid: 1, acknowledgement: { kind: 'deferred', confirmClean: true } }], { k: intent(1, 0) });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    s.holdAcks(gate);
    s.table.enqueue('k', 'scan');
    s.invoker.dispatch();
    await flush();
    assert.equal(s.table.get('k')?.mode, 'settling');
    assert.equal(s.invoker.hasBudget(), true, 'the worker is back: its slot is free');
    assert.equal(s.table.enqueue('k', 'request'), false, 'the key is still busy');
    release();
    await flush();
    assert.deepEqual(s.acks, ['k:1'], "committed by the supervisor, confirming the start snapshot's dirty generation");
    assert.equal(s.table.busy('k'), false);
    assert.deepEqual(s.invoker.failures, {});
  });

  test('a request accepted after the acknowledgement committed, found owed while the key settles, gets a successor', async () => {
    // The window between the acknowledgement's commit and the key leaving the table: the row the
    // commit returned owes nothing, and owed discovery passes the key over because it is busy.
    const intents = { k: intent(1, 0) };
    const discovery = new OwedDiscovery(new ManualClock(), 100);
    let found = -1;
    const s = setup(
      [{ status: 'ok', durationMs: 1, pid: 1, acknowledgement: { kind: 'deferred', confirmClean: false } }, () => new Promise<WorkerOutcome>(() => undefined)],
      intents,
      async (scopeId) => {
        intents.k.requestedGeneration += 1; // another client's trigger, committed after the acknowledgement
        discovery.notify(intents.k.pendingSequence);
        await discovery.discover({
          read: async () => ({ keys: [{ scopeId, pendingSequence: 5, requestedGeneration: intents.k.requestedGeneration }], exhausted: true }),
          busy: (id) => s.table.busy(id),
          passedOver: (id, requested) => {
            found = requested;
            s.table.owedWhileBusy(id, requested);
          },
          room: () => s.table.room(),
          enqueue: (id) => s.table.enqueue(id, 'request'),
          wake: () => undefined,
        });
      },
    );
    s.table.enqueue('k', 'request');
    s.invoker.dispatch();
    await flush();
    await flush();
    assert.equal(found, 2, 'discovery saw the new request while the key was busy');
    assert.equal(s.invoker.invocations, 2, 'the new request ran as a successor');
    assert.equal((s.table.get('k') as { invocation?: { source: string; generation: number } }).invocation?.source, 'successor');
    assert.equal((s.table.get('k') as { invocation: { generation: number } }).invocation.generation, 2);
  });

  test('a busy key keeps the highest generation found owed; the one its invocation claimed owes no successor', async () => {
    const s = setup([() => new Promise<WorkerOutcome>(() => undefined)], { k: intent(1, 0) });
    s.table.enqueue('k', 'request');
    s.invoker.dispatch();
    await flush();
    assert.equal((s.table.get('k') as { invocation: { generation: number } }).invocation.generation, 1);
    s.table.owedWhileBusy('k', 1);
    s.table.owedWhileBusy('k', 0);
    assert.equal(s.table.invocationOf('k')?.owedSeen, 1, 'the running invocation handles generation 1: no successor');
    s.table.owedWhileBusy('k', 2);
    assert.equal(s.table.invocationOf('k')?.owedSeen, 2);
  });

  test('a crash after the acknowledgement committed is done, not a failure', async () => {
    const s = setup([{ status: 'crashed', durationMs: 1, pid: 1, exitCode: 1, signal: null, error: { name: 'WorkerCrash', message: 'x' } }], {
      k: intent(1, 1),
    });
    s.table.enqueue('k', 'request');
    s.invoker.dispatch();
    await flush();
    assert.equal(s.table.busy('k'), false);
    assert.deepEqual(s.invoker.failures, {});
  });

  test('a failure waits for its backoff on the clock and names the first trigger on its retry; a conflict does not count', async () => {
    const failed: WorkerOutcome = { status: 'failed', durationMs: 1, pid: 1, error: { name: 'Error', message: 'boom' } };
    const conflict: WorkerOutcome = { status: 'conflict', durationMs: 1, pid: 1 };
    const s = setup([failed, conflict], { k: intent(1, 0) });
    s.table.enqueue('k', 'scan');
    s.invoker.dispatch();
    await flush();
    assert.equal(s.table.get('k')?.mode, 'retry_wait');
    assert.equal(s.table.get('k')?.origin, 'scan');
    assert.deepEqual(s.invoker.failures, { failed: 1 });
    const due = s.backoff.get('k')!.nextRetryAt;
    assert.equal(due - s.clock.now(), 1_000);
    assert.deepEqual(s.backoff.due(s.clock.now()), []);
    await s.clock.advance(1_000);
    assert.deepEqual(s.backoff.due(s.clock.now()), ['k']);
    s.table.promote('k');
    s.invoker.dispatch();
    await flush();
    assert.equal(s.table.get('k')?.mode, 'retry_wait');
    assert.equal(s.table.get('k')?.origin, 'scan', 'a retry keeps the first trigger');
    assert.equal(s.backoff.get('k')!.consecutiveFailures, 1, 'a conflict does not count as a failure');
    assert.equal(s.backoff.get('k')!.nextRetryAt - s.clock.now(), 100);
  });

  test('an ok without an acknowledgement in the database is not_acknowledged; nothing owed is not invoked; term_lost is reported', async () => {
    const s = setup(
      [
        { status: 'already_handled', durationMs: 1, pid: 1 },
        { status: 'term_lost', durationMs: 1, pid: 1 },
      ],
      { a: intent(1, 0), b: intent(1, 1), c: intent(1, 0) },
    );
    for (const k of ['a', 'b', 'c']) {
      s.table.enqueue(k, 'request');
      s.invoker.dispatch();
      await flush();
    }
    assert.deepEqual(s.invoker.failures, { not_acknowledged: 1 });
    assert.equal(s.invoker.invocations, 2, 'b owed nothing');
    assert.equal(s.lost(), 1);
    assert.equal(s.table.busy('c'), false, 'the new term recovers it from the database');
  });
});
