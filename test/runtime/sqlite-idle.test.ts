// SQLite wake-ups (RFC 8): an idle SQLite runtime issues no periodic database queries (no
// polling), and is woken by explicit requests and dirty marks committed by other processes
// (`apsup trigger` / `apsup mark-dirty`), which it picks up without polling. Since nothing polls,
// a family examination that fails (a transient database error) must schedule its own retry.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { Runtime } from '../../src/runtime/runtime.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { beforeNextWatch, erringWatch, failingWatch, restoreWatch, watchError } from '../helpers/fs-watch.ts';
import { P, REPO_ROOT, createFixtureTables, intentOf, runs, runtimeConfig, statsOf, waitForState } from '../fixtures/runtime-harness.ts';
import families from '../fixtures/families/idle.ts';
import path from 'node:path';

const FAMILIES_MODULE = path.join(REPO_ROOT, 'test/fixtures/families/idle.ts');

/**
 * Waits until the runtime has settled: no examination round running or scheduled, nothing
 * running or queued, every processor run recorded its end (the workers' last commits, which wake
 * the runtime through the commit watch), and the round count unchanged over three consecutive
 * polls (the watch reacts to a commit within a few milliseconds).
 */
async function settled(fx: BackendFixture, runtime: Runtime): Promise<void> {
  const supervisor = runtime.supervisors[0];
  let last = -1;
  let stable = 0;
  await waitFor(async () => {
    const quiet =
      supervisor.idle &&
      ['fx-idle', 'fx-manual'].every((f) => statsOf(runtime, f).running === 0 && statsOf(runtime, f).ready === 0) &&
      (await runs(fx)).every((r) => r.endedMs !== null);
    stable = quiet && supervisor.ticks === last ? stable + 1 : 0;
    last = supervisor.ticks;
    return stable >= 3;
  }, 10_000);
}

/** The environment of an `apsup` command on the fixture's database. */
function cliEnv(fx: BackendFixture): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, [`${P}DATABASE_URL`]: fx.url, [`${P}FAMILIES_MODULE`]: FAMILIES_MODULE, APSUP_LOG_LEVEL: 'silent' };
}

function cli(fx: BackendFixture, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/apsup.mjs', ...args], {
      cwd: REPO_ROOT,
      env: cliEnv(fx),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe("[sqlite] an idle runtime does not poll; other processes' commits wake it", () => {
  let fx: BackendFixture;
  let runtime: Runtime;
  let calls = 0;
  // The host's timers run on this clock: an idle window is host time the test moves on, not a sleep.
  const clock = new ManualClock();
  /** fx-idle's interval (3600 s) is the only deadline: windows stay inside it. */
  const WINDOW_MS = 25 * 60_000;

  before(async () => {
    fx = await createBackend('sqlite');
    await createFixtureTables(fx);
    // Count every statement the runtime's own store issues (operations, domain reads, transactions).
    const store = SqliteStore.open((fx.target as { file: string }).file);
    const s = store as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const name of ['call', 'domainQuery', 'transaction']) {
      const original = s[name].bind(store);
      s[name] = (...args: unknown[]) => {
        calls += 1;
        return original(...args);
      };
    }
    runtime = new Runtime(runtimeConfig(fx, families), createLogger({ level: process.env.APSUP_TEST_LOG_LEVEL ?? 'silent' }), { store, clock });
    await runtime.start();
  });
  after(async () => {
    await runtime?.stop();
    await fx?.cleanup();
  });

  test('no ticks and no statements while idle; `apsup trigger` and `apsup mark-dirty` from another process are picked up', async () => {
    const supervisor = runtime.supervisors[0];
    await waitFor(() => supervisor.ticks >= 1);
    await settled(fx, runtime); // the start-up examination has finished
    const ticks = supervisor.ticks;
    const before = calls;
    await clock.advance(WINDOW_MS); // 25 minutes of host time: every timer the host armed in it has fired
    assert.equal(supervisor.ticks, ticks, 'no supervisor rounds while idle');
    assert.equal(calls, before, 'no database statements while idle');

    const trigger = await cli(fx, ['trigger', 'fx-manual', 'm1']);
    assert.equal(trigger.code, 0, trigger.stderr);
    assert.equal(JSON.parse(trigger.stdout).status, 'accepted');
    // Host time moves on while the test waits, as it would on the system clock.
    await waitForState(fx, runtime, ['fx-manual'], async () => {
      await clock.advance(10);
      return (await intentOf(fx, 'fx-manual', 'm1'))!.handledGeneration === 1;
    });

    const mark = await cli(fx, ['mark-dirty', 'fx-idle', 'i1']);
    assert.equal(mark.code, 0, mark.stderr);
    await waitForState(fx, runtime, ['fx-idle'], async () => {
      await clock.advance(10);
      const i = await intentOf(fx, 'fx-idle', 'i1');
      return i!.handledGeneration === 1 && i!.cleanGeneration === i!.dirtyGeneration;
    });
    assert.ok(supervisor.ticks > ticks);

    // Idle again: the worker processes stay, the runtime does not poll.
    await settled(fx, runtime);
    const ticks2 = supervisor.ticks;
    const calls2 = calls;
    await clock.advance(WINDOW_MS);
    assert.equal(supervisor.ticks, ticks2);
    assert.equal(calls, calls2);
  });
});

describe('[sqlite] a failed examination is retried although nothing polls', () => {
  let fx: BackendFixture;
  let runtime: Runtime;
  let failNext = 0;

  before(async () => {
    fx = await createBackend('sqlite');
    await createFixtureTables(fx);
    const store = SqliteStore.open((fx.target as { file: string }).file);
    const original = store.listOwedRequests.bind(store);
    store.listOwedRequests = async (...args: Parameters<SqliteStore['listOwedRequests']>) => {
      if (failNext > 0) {
        failNext -= 1;
        throw Object.assign(new Error('SQLITE_BUSY: database is locked (injected)'), { code: 'SQLITE_BUSY' });
      }
      return original(...args);
    };
    runtime = new Runtime(runtimeConfig(fx, families), createLogger({ level: process.env.APSUP_TEST_LOG_LEVEL ?? 'silent' }), { store });
    await runtime.start();
  });
  after(async () => {
    await runtime?.stop();
    await fx?.cleanup();
  });

  test('the request is dispatched after the failed discovery, and the family recovers its health', async () => {
    await waitFor(() => runtime.supervisors[0].ticks >= 1);
    failNext = 1;
    await runtime.trigger('fx-manual', 'r1');
    await waitFor(() => statsOf(runtime, 'fx-manual').health === 'degraded', 5_000);
    await waitFor(async () => (await intentOf(fx, 'fx-manual', 'r1'))!.handledGeneration === 1, 10_000);
    assert.equal(statsOf(runtime, 'fx-manual').health, 'ok');
    assert.equal(statsOf(runtime, 'fx-manual').lastError, null);
  });
});

describe('[sqlite] the commit watch is what wakes the runtime: a runtime without one does not run', () => {
  after(restoreWatch);

  test('a directory that cannot be watched fails the start with the limit to raise; a watch that fails later stops the host', async () => {
    const fx = await createBackend('sqlite');
    const logger = createLogger({ level: process.env.APSUP_TEST_LOG_LEVEL ?? 'silent' });
    try {
      await createFixtureTables(fx);
      failingWatch(watchError('ENOSPC'));
      const refused = new Runtime(runtimeConfig(fx, families), logger);
      await assert.rejects(refused.start(), /cannot watch .* for other processes' commits.*fs\.inotify\.max_user_watches/);
      await refused.stop();

      const fail = erringWatch();
      const runtime = new Runtime(runtimeConfig(fx, families), logger);
      const fatal: string[] = [];
      runtime.onFatal = (reason) => fatal.push(reason);
      await runtime.start();
      try {
        fail(watchError('EIO'));
        assert.equal(fatal.length, 1);
        assert.match(fatal[0], /cannot watch .* for other processes' commits.*EIO/);
      } finally {
        await runtime.stop();
      }
    } finally {
      restoreWatch();
      await fx.cleanup();
    }
  });
});

describe('[sqlite] a commit made while the runtime starts its watch is not lost', () => {
  after(restoreWatch);

  test('a trigger committed after the start-up examination and before the watch began is run', async () => {
    const fx = await createBackend('sqlite');
    const runtime = new Runtime(runtimeConfig(fx, families), createLogger({ level: process.env.APSUP_TEST_LOG_LEVEL ?? 'silent' }));
    try {
      await createFixtureTables(fx);
      // Another process commits a trigger once the supervisors have started and before the watch
      // begins: no file event is left for it. (A start whose examination ended before the watch
      // began lost it for good: checked with a 300 ms pause put there.)
      beforeNextWatch(() => {
        const trigger = spawnSync(process.execPath, ['bin/apsup.mjs', 'trigger', 'fx-manual', 'w1'], { cwd: REPO_ROOT, env: cliEnv(fx), encoding: 'utf8' });
        assert.equal(trigger.status, 0, trigger.stderr);
      });
      await runtime.start();
      await waitForState(fx, runtime, ['fx-manual'], async () => (await intentOf(fx, 'fx-manual', 'w1'))?.handledGeneration === 1, 10_000);
    } finally {
      restoreWatch();
      await runtime.stop();
      await fx.cleanup();
    }
  });
});
