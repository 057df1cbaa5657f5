// Issue 17 item 1 (RFC 1, 2): on SQLite a worker holding the write lock must not stall the host.
// While a worker of family fx-hold keeps its `ctx.commit` (BEGIN IMMEDIATE) open for 3 s:
//   - family fx-free's invocations are dispatched (their supervisor-committed acknowledgements
//     wait for the lock and commit once it is free);
//   - a timeout of family fx-stuck (1 s) fires within its bound;
//   - family fx-scan's automatic scan (every second: a write, waiting for the lock) holds up no
//     other family;
//   - /healthz answers;
//   - the host's event-loop delay (perf_hooks.monitorEventLoopDelay) stays under 100 ms at p99.
// Workers are real processes (test/fixtures/processors/lock-probe.ts); they report through files,
// and the test itself touches no database while the lock is held (its own connection would wait).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { createLogger } from '../../src/logging.ts';
import { ObservabilityServer } from '../../src/observability/server.ts';
import { Runtime } from '../../src/runtime/runtime.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  P,
  FIXTURES_DIR,
  createFixtureTables,
  intentOf,
  runtimeConfig,
  sinkDestination,
  startRuntime,
  statsOf,
  testFamily,
  waitForState,
} from '../fixtures/runtime-harness.ts';

const PROBE = path.join(FIXTURES_DIR, 'processors', 'lock-probe.ts');
const HOLD_MS = 3000;
const FREE = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8'];
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Mark = { scope: string; event: string; t: number };

function marks(dir: string, family: string): Mark[] {
  const file = path.join(dir, `${family}.jsonl`);
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Mark);
}

describe('[sqlite] a worker holding the write lock does not stall the host', () => {
  let fx: BackendFixture;
  let runtime: Runtime | null = null;
  let server: ObservabilityServer | null = null;
  let dir = '';
  // Only the 'worker process ready' lines are kept (parsing every debug line would cost the host CPU).
  const ready: Array<Record<string, unknown>> = [];
  ready.push = (...items) =>
    Array.prototype.push.apply(
      ready,
      items.filter((l) => l.msg === 'worker process ready'),
    );

  before(async () => {
    fx = await createBackend('sqlite');
    await createFixtureTables(fx);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-lock-'));
    runtime = await startRuntime(
      fx,
      [
        testFamily('fx-hold', { processorModule: PROBE, maxWorkers: 1 }),
        testFamily('fx-free', { processorModule: PROBE, maxWorkers: 1 }),
        testFamily('fx-stuck', { processorModule: PROBE, maxWorkers: 1, timeoutSeconds: 1 }),
        testFamily('fx-scan', { processorModule: PROBE, maxWorkers: 1, schedule: { kind: 'interval', seconds: 1 } }),
      ],
      {
        logSink: ready,
        logLevel: 'debug',
        // A TTL of 6 s: the 3 s hold stays within a commit's budget (one TTL; past it the host
        // kills the worker, issue 40 item 3).
        env: { [`${P}ARTIFACT_PROCESSING_WARM_WORKERS`]: '1', [`${P}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS`]: '6' },
        workerEnv: { APSUP_TEST_MARKS: dir, APSUP_TEST_HOLD_MS: String(HOLD_MS) },
      },
    );
    server = await ObservabilityServer.start(runtime, { address: { host: '127.0.0.1', port: 0 } });
    await (await fetch(`${server.url}/healthz`)).text(); // loads the HTTP client before the measurement
    // Warm workers (WARM_WORKERS 1): the invocations below start without a cold start.
    await waitFor(() => ['fx-hold', 'fx-free', 'fx-stuck', 'fx-scan'].every((f) => ready.some((l) => l.family === f)), 30_000);
  });
  after(async () => {
    await server?.stop();
    await runtime?.stop();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('other families dispatch, a timeout fires, /healthz answers, the event loop stays responsive', async () => {
    const rt = runtime!;
    // Measured from the first trigger until the hold has ended.
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    // The histogram under-reports a frozen loop (few samples): also the largest gap between 10 ms ticks.
    let last = performance.now();
    let maxGap = 0;
    const gaps = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 10);
    for (const s of ['d1', 'd2']) await rt.markDirty('fx-scan', s);
    for (const s of FREE) await rt.trigger('fx-free', s);
    await rt.trigger('fx-stuck', 'c0');
    await rt.trigger('fx-stuck', 'c1');
    await rt.trigger('fx-hold', 'h1');

    // From here until the hold ends: files and HTTP only.
    const flag = path.join(dir, 'held.flag');
    const deadline = Date.now() + 20_000;
    while (!fs.existsSync(flag)) {
      if (Date.now() > deadline) throw new Error('the holding worker never took the lock');
      await sleep(5);
    }
    const health: number[] = [];
    let released = false;
    const pinger = (async () => {
      while (!released) {
        const at = performance.now();
        try {
          const res = await fetch(`${server!.url}/healthz`);
          await res.text();
          health.push(res.status === 200 ? performance.now() - at : Infinity);
        } catch {
          health.push(Infinity); // no answer
        }
        await sleep(100);
      }
    })();
    while (!marks(dir, 'fx-hold').some((m) => m.event === 'releasing')) {
      if (Date.now() > deadline + HOLD_MS) throw new Error('the holding worker never released the lock');
      await sleep(20);
    }
    released = true;
    await pinger;
    await sleep(50); // a freeze that ended just now is recorded once the loop turns again
    delay.disable();
    clearInterval(gaps);

    const p99 = delay.percentile(99) / 1e6;
    const max = delay.max / 1e6;
    const hold = marks(dir, 'fx-hold');
    const heldAt = hold.find((m) => m.event === 'held')!.t;
    const releasedAt = hold.find((m) => m.event === 'releasing')!.t;
    const freeStarts = marks(dir, 'fx-free').filter((m) => m.event === 'start' && m.t > heldAt && m.t < releasedAt);
    const stuck = marks(dir, 'fx-stuck').filter((m) => m.scope === 'c1');
    const c1Start = stuck.find((m) => m.event === 'start');
    const c1Aborted = stuck.find((m) => m.event === 'aborted');
    console.log(
      `event-loop delay while the lock was held ${releasedAt - heldAt} ms: p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms, ${delay.count} samples, largest gap ${Math.round(maxGap)} ms; ` +
        `/healthz ${health.length} answers, slowest ${Math.round(Math.max(...health))} ms; fx-free dispatched during the hold: ${freeStarts.length}; ` +
        `fx-stuck c1 ${c1Start ? `started +${c1Start.t - heldAt} ms` : 'not started'}${c1Start && c1Aborted ? `, aborted ${c1Aborted.t - c1Start.t} ms after its start` : ''}`,
    );

    // A blocked loop also shows as missing samples (one per 10 ms while it turns).
    assert.ok(delay.count >= (releasedAt - heldAt) / 10 / 2, `${delay.count} event-loop samples in ${releasedAt - heldAt} ms`);
    assert.ok(p99 < 100, `event-loop delay p99 ${p99.toFixed(1)} ms under a held lock`);
    assert.ok(health.length >= 10 && Math.max(...health) < 250, `/healthz answered ${health.length} times, slowest ${Math.round(Math.max(...health))} ms`);
    // f1 runs into the hold; f2..f8 (150 ms each, one worker) are all dispatched during it.
    assert.ok(freeStarts.length >= FREE.length - 1, `fx-free dispatched ${freeStarts.length} invocations while the lock was held`);
    assert.ok(c1Start && c1Start.t < releasedAt, 'fx-stuck c1 was dispatched while the lock was held');
    assert.ok(c1Aborted && c1Aborted.t < releasedAt, 'its timeout fired while the lock was still held');
    assert.ok(c1Aborted.t - c1Start.t <= 1000 + 300, `its 1 s timeout fired ${c1Aborted.t - c1Start.t} ms after its start`);

    // Once the lock is free the supervisor-committed acknowledgements commit.
    await waitForState(
      fx,
      rt,
      ['fx-free', 'fx-hold'],
      async () => {
        for (const s of FREE) if ((await intentOf(fx, 'fx-free', s))?.handledGeneration !== 1) return false;
        return (await intentOf(fx, 'fx-hold', 'h1'))?.handledGeneration === 1 && (await intentOf(fx, 'fx-stuck', 'c0'))?.handledGeneration === 1;
      },
      20_000,
    );
    assert.ok(statsOf(rt, 'fx-stuck').timeouts >= 1);
    assert.equal(statsOf(rt, 'fx-free').failures.failed ?? 0, 0, 'no acknowledgement failed');
  });
});

describe("[sqlite] a lock held past the host's bound is a transient failure", () => {
  let fx: BackendFixture;
  let runtime: Runtime | null = null;
  let holder: Database.Database | null = null;
  let dir = '';
  const logs: Array<Record<string, unknown>> = [];

  before(async () => {
    fx = await createBackend('sqlite');
    await createFixtureTables(fx);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-lock-'));
    const file = (fx.target as { file: string }).file;
    const config = runtimeConfig(fx, [testFamily('fx-free', { processorModule: PROBE, maxWorkers: 1 })]);
    // The host's lock waits give up after 300 ms (the lock below is held for 2 s).
    runtime = new Runtime(config, createLogger({ level: 'info', destination: sinkDestination(logs) }), {
      store: SqliteStore.openHost(file, { boundMs: 300, busyTimeoutMs: 0 }),
      workerEnv: { APSUP_TEST_MARKS: dir },
    });
    await runtime.start();
    holder = new Database(file);
  });
  after(async () => {
    if (holder?.inTransaction) holder.exec('ROLLBACK');
    holder?.close();
    await runtime?.stop();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the acknowledgement fails with DatabaseBusyError, the key backs off, and it is handled once the lock is free', async () => {
    const rt = runtime!;
    await rt.trigger('fx-free', 'k1');
    await waitFor(() => marks(dir, 'fx-free').some((m) => m.event === 'start'), 20_000);
    // A real second connection takes the write lock while the invocation waits for the flag.
    holder!.exec('BEGIN IMMEDIATE');
    fs.writeFileSync(path.join(dir, 'held.flag'), String(Date.now()));
    const busy = () => logs.filter((l) => l.msg === 'scope invocation failed' && l.errorType === 'DatabaseBusyError');
    await waitFor(() => busy().length >= 2, 20_000);
    assert.equal(rt.status().supervisors[0].state, 'leader', 'a busy database is not a lost term');
    assert.match(String(busy()[0].err), /database busy/);
    holder!.exec('COMMIT');
    await waitForState(fx, rt, ['fx-free'], async () => (await intentOf(fx, 'fx-free', 'k1'))?.handledGeneration === 1, 20_000);
    assert.ok(statsOf(rt, 'fx-free').failures.failed >= 2);
  });
});
