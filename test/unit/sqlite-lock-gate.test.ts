// The SQLite host's lock wait (lock-wait.ts): a lock found taken is probed again on the next turn
// of the event loop for its first PROMPT_PROBES probes (a worker's commit holds it for a fraction
// of a millisecond), then after timers that double up to 25 ms; the event loop never sleeps on it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUSY, LockGate, PROMPT_PROBES, retryWhileBusy } from '../../src/store/sqlite/lock-wait.ts';

/** Whether the gate's next probe comes on the next turn of the event loop ('probe') or later ('later'). */
async function firstOf(gate: LockGate): Promise<'probe' | 'later'> {
  // Both are immediates, queued in this order: the gate's comes first when it probes on the next turn.
  const r = await Promise.race([gate.busy().then(() => 'probe' as const), new Promise<'later'>((resolve) => setImmediate(() => resolve('later')))]);
  if (gate.closed) await gate.busy(); // let a pending timer end before the next step (takes no probe)
  return r;
}

test('a lock found taken is probed again on the next turn for its first probes, then by timers', async (t) => {
  const gate = new LockGate();
  assert.equal(await firstOf(gate), 'probe', 'the first probe comes on the next turn');
  for (let i = 2; i < PROMPT_PROBES; i += 1) await gate.busy();
  assert.equal(await firstOf(gate), 'probe', 'still one of the prompt probes');
  // No wall-clock verdict: with setTimeout mocked, a probe that waits for a timer never comes
  // until the mocked clock reaches it (1 ms), however slow the machine.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let probed = false;
  void gate.busy().then(() => {
    probed = true;
  });
  for (let i = 0; i < 5; i += 1) await new Promise((r) => setImmediate(r));
  assert.equal(probed, false, 'after the prompt probes the probes wait for a timer');
  t.mock.timers.tick(1);
  await new Promise((r) => setImmediate(r));
  assert.equal(probed, true, 'the first timer is 1 ms');
  t.mock.timers.reset();
  gate.free();
  assert.equal(await firstOf(gate), 'probe', 'a lock found free starts the next wait prompt again');
});

test('the bound still ends a wait for a lock that stays taken with DatabaseBusyError', async () => {
  const gate = new LockGate();
  let probes = 0;
  const started = performance.now();
  const error = await retryWhileBusy('op', { boundMs: 60, busyTimeoutMs: 0 }, gate, async () => {
    probes += 1;
    return BUSY;
  }).catch((e: Error) => e);
  assert.equal((error as Error).name, 'DatabaseBusyError');
  assert.ok(performance.now() - started >= 60);
  assert.ok(probes < 60, `${probes} probes in 60 ms: PROMPT_PROBES prompt probes, then timers`);
});
