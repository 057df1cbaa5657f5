// The term keeper's local deadlines on an injected clock (RFC 8), with a scripted lease store
// (the database stays the authority; only the keeper's own timers are driven): renewals run each
// period, a failed renewal suspends dispatch and a good one resumes it, a hung renewal loses the
// term exactly at the local deadline (start of the last good renewal + TTL), not a tick before.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TermKeeper } from '../../src/runtime/term-keeper.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { createLogger } from '../../src/logging.ts';
import type { Store } from '../../src/store/types.ts';

type Mode = 'ok' | 'fail' | 'hang';

function leaseStore() {
  const state = { mode: 'ok' as Mode, renewals: 0, invalidations: 0, generation: 1 };
  const store = {
    backend: 'mysql',
    async acquireTerm() {
      return { outcome: 'acquired', supervisorGeneration: state.generation, holderId: 'h' };
    },
    renewTerm() {
      state.renewals += 1;
      if (state.mode === 'fail') return Promise.reject(new Error('connection reset (scripted)'));
      if (state.mode === 'hang') return new Promise(() => undefined);
      return Promise.resolve();
    },
    async invalidateTerm() {
      state.invalidations += 1;
      state.generation += 1;
    },
  } as unknown as Store;
  return { store, state };
}

const TTL = 3_000;
const RENEW = 500;

async function leader() {
  const clock = new ManualClock();
  const { store, state } = leaseStore();
  const keeper = new TermKeeper(store, {
    supervisorKey: 'global',
    holderId: 'h',
    ttlMs: TTL,
    renewEveryMs: RENEW,
    logger: createLogger({ level: 'silent' }),
    clock,
  });
  const events: string[] = [];
  for (const e of ['acquired', 'lost', 'suspended', 'resumed'] as const)
    keeper.on(e as 'acquired', () => {
      events.push(e);
    });
  await keeper.start();
  assert.equal(keeper.state, 'leader');
  return { clock, keeper, state, events };
}

describe('TermKeeper on a manual clock', () => {
  test('renewals follow the period of the clock, not the wall', async () => {
    const k = await leader();
    assert.equal(k.state.renewals, 0);
    await k.clock.advance(RENEW * 4);
    assert.equal(k.state.renewals, 4);
    assert.equal(k.keeper.term?.supervisorGeneration, 1);
    await k.keeper.stop();
  });

  test('a failed renewal suspends dispatch at once; a good renewal of the same term resumes it', async () => {
    const k = await leader();
    k.state.mode = 'fail';
    await k.clock.advance(RENEW);
    assert.equal(k.keeper.suspended, true);
    assert.equal(k.keeper.state, 'leader', 'kept while it may still be renewed');
    k.state.mode = 'ok';
    await k.clock.advance(RENEW);
    assert.equal(k.keeper.suspended, false);
    assert.deepEqual(k.events, ['acquired', 'suspended', 'resumed']);
    await k.keeper.stop();
  });

  test('a hung renewal loses the term at the local deadline, not before; the next term invalidates the old one first', async () => {
    const k = await leader();
    await k.clock.advance(RENEW); // one good renewal at t = 500: deadline 3 500
    k.state.mode = 'hang';
    await k.clock.advance(RENEW); // the hung renewal starts at t = 1 000
    await k.clock.advance(RENEW * 2); // its statement bound (one period) has passed: suspended
    assert.equal(k.keeper.suspended, true);
    await k.clock.advance(3_499 - k.clock.monotonic());
    assert.equal(k.keeper.term?.supervisorGeneration, 1, 'still the term a tick before the deadline');
    await k.clock.advance(1);
    assert.equal(k.keeper.term, null, 'lost at the deadline whatever the pending renewal does');
    assert.ok(k.events.includes('lost'));
    k.state.mode = 'ok';
    await k.clock.advance(RENEW * 2);
    assert.equal(k.state.invalidations, 1, 'the old term is made invalid before leading again');
    assert.equal(k.keeper.state, 'leader');
    await k.keeper.stop();
  });
});
