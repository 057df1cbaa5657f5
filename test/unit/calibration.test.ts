// Provider calibration (RFC 1) and family health (RFC 8): the calibration runs in the background
// and holds the check until it ended; a hung provider is cut at the discovery deadline (on the
// clock, no sleep); a failure degrades the family and is not retried before the retry base; the
// typed health keeps an examination's and a provider's failures apart.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProviderCalibration, type CalibrationContext } from '../../src/runtime/calibration.ts';
import { FamilyHealth } from '../../src/runtime/family-health.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { createLogger } from '../../src/logging.ts';
import type { PendingWorkProvider } from '../../src/registry/registration.ts';

const logger = createLogger({ level: 'silent' });
const settle = () => new Promise((r) => setImmediate(r));

function setup(provider: PendingWorkProvider | undefined) {
  const clock = new ManualClock();
  const health = new FamilyHealth();
  let wakes = 0;
  const marked: string[] = [];
  const context: CalibrationContext = {
    bindingName: 'b',
    family: 'f',
    markDirty: async (id) => {
      marked.push(id);
    },
    query: async () => [],
    wake: () => {
      wakes += 1;
    },
    providerFailed: (m) => health.providerFailed(m),
    providerSucceeded: () => health.providerSucceeded(),
  };
  const calibration = new ProviderCalibration(provider, { discoveryTimeoutMs: 1_000, retryBaseMs: 30_000 }, context, clock, logger);
  return { clock, health, calibration, marked, wakes: () => wakes };
}

describe('ProviderCalibration', () => {
  test('without a provider the check never waits', () => {
    assert.equal(setup(undefined).calibration.ready(), true);
    assert.equal(setup({}).calibration.ready(), true);
  });

  test('a good calibration holds the check until it ended, then lets exactly one check through', async () => {
    const s = setup({
      async remarkDirty({ markDirty }) {
        await markDirty('s1');
        return 1;
      },
    });
    assert.equal(s.calibration.ready(), false, 'started');
    assert.equal(s.calibration.inFlight, true);
    assert.equal(s.calibration.ready(), false, 'still running');
    await settle();
    assert.equal(s.wakes(), 1, 'its end wakes the loop');
    assert.deepEqual(s.marked, ['s1']);
    assert.equal(s.calibration.ready(), true, 'the outcome is used by this check');
    assert.equal(s.calibration.ready(), false, 'the next check calibrates again');
  });

  test('a hung provider is cut at the discovery deadline; the family is degraded and not recalibrated before the retry base', async () => {
    let calls = 0;
    let signal: AbortSignal | null = null;
    const s = setup({
      remarkDirty: (ctx) => {
        calls += 1;
        signal = ctx.signal;
        return new Promise<number>(() => undefined);
      },
    });
    assert.equal(s.calibration.ready(), false);
    await s.clock.advance(999);
    assert.equal(s.calibration.inFlight, true, 'not before the deadline');
    await s.clock.advance(1);
    await settle();
    assert.equal((signal as AbortSignal | null)?.aborted, true, 'the provider was told');
    assert.equal(s.calibration.inFlight, false);
    assert.deepEqual(s.health.current, { kind: 'provider_failed', message: 'discovery deadline passed' });
    assert.equal(s.health.lastError, 'provider: discovery deadline passed');
    assert.equal(s.calibration.ready(), true, 'the check goes on over the existing marks');
    assert.equal(s.calibration.ready(), true, 'blocked: no recalibration within the retry base');
    await s.clock.advance(30_000);
    assert.equal(s.calibration.ready(), false, 'tried again after the retry base');
    assert.equal(calls, 2);
  });

  test('abort ends a run in flight (shutdown)', async () => {
    const s = setup({ remarkDirty: () => new Promise<number>(() => undefined) });
    s.calibration.ready();
    s.calibration.abort();
    await settle();
    assert.equal(s.calibration.inFlight, false);
    assert.equal(s.health.state, 'degraded');
  });
});

describe('FamilyHealth', () => {
  test('a good examination clears an examination failure, never a provider failure', () => {
    const h = new FamilyHealth();
    assert.equal(h.state, 'ok');
    h.examinationFailed('db down');
    assert.deepEqual([h.state, h.lastError], ['degraded', 'db down']);
    h.examinationSucceeded();
    assert.deepEqual([h.state, h.lastError], ['ok', null]);

    h.providerFailed('boom');
    h.examinationFailed('provider of rows failed'); // a message that merely starts like a provider's
    h.examinationSucceeded();
    assert.deepEqual([h.state, h.lastError], ['ok', null], "the last failure was the examination's");

    h.examinationFailed('x');
    h.providerFailed('boom');
    h.examinationSucceeded();
    assert.deepEqual([h.state, h.lastError], ['degraded', 'provider: boom'], 'a provider failure set since stays');
    h.providerSucceeded();
    assert.deepEqual([h.state, h.lastError], ['ok', null]);
  });

  test('a good calibration never clears an examination failure; the invocation streak shows when nothing else does', () => {
    const h = new FamilyHealth();
    h.examinationFailed('db down');
    h.providerSucceeded();
    assert.equal(h.lastError, 'db down');
    h.examinationSucceeded();
    for (let i = 0; i < 3; i += 1) h.invocations.failed('failed', 'bad input');
    assert.equal(h.state, 'degraded');
    assert.match(h.lastError ?? '', /3 invocations failed in a row/);
    h.invocations.succeeded();
    assert.equal(h.state, 'ok');
  });
});
