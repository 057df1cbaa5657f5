// Lifetime of `apsup run` (src/cli/run.ts: "runs the supervisors until SIGINT/SIGTERM, then shuts
// down cleanly ... the term is invalidated"; RFC section 9 "关闭"): an idle runtime, with no worker
// child and no open socket, must stay up until a signal, and only a signal ends it, through the
// clean shutdown (term invalidated, SQLite host lock released). Every runtime timer is unref'd and
// the SQLite commit watch is not persistent, so this pins the explicit keep-alive of
// runUntilSignal (before it, such a process exited at once with code 0, skipping the shutdown and
// leaving the permanent SQLite term valid and the host lock behind).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { RuntimeProcess, killEverything, makeFixtureDir, withTimeout } from '../fixtures/failover/harness.ts';

/** Where /proc cannot be read (not Linux): a window in which an idle runtime must not exit. */
const STAYS_UP_FALLBACK_MS = 1_500;
/** epoll_wait, epoll_pwait, epoll_pwait2: where a Node event loop waits with nothing to do. */
const EPOLL_SYSCALLS: Record<string, string[]> = { x64: ['232', '281', '441'], arm64: ['22', '441'] };

function syscallOf(pid: number): string | null {
  try {
    return fs.readFileSync(`/proc/${pid}/syscall`, 'utf8').split(' ')[0]!;
  } catch {
    return null;
  }
}

/**
 * Evidence that an idle runtime is kept alive, not a pause: its main thread seen waiting in its
 * event loop (epoll) at three looks in a row, 50 ms apart, the process still there. A loop with
 * nothing that keeps it alive returns instead of waiting there, and the process exits.
 */
async function staysUp(p: RuntimeProcess): Promise<void> {
  const lastLines = () =>
    JSON.stringify(
      p
        .own()
        .slice(-3)
        .map((l) => l.msg),
    );
  const deadline = Date.now() + 15_000;
  for (let seen = 0; seen < 3; ) {
    assert.ok(p.alive, `${p.name} exited on its own while idle; last lines: ${lastLines()}`);
    const call = syscallOf(p.pid);
    if (call === null && p.alive) {
      const outcome = await Promise.race([p.exited.then((e) => ({ exited: e })), new Promise<null>((r) => setTimeout(() => r(null), STAYS_UP_FALLBACK_MS))]);
      assert.equal(outcome, null, `${p.name} exited on its own while idle: ${JSON.stringify(outcome)}; last lines: ${lastLines()}`);
      return;
    }
    seen = call !== null && EPOLL_SYSCALLS[process.arch]?.includes(call) ? seen + 1 : 0;
    assert.ok(Date.now() < deadline, `${p.name} was not seen idle in its event loop within 15 s (last syscall ${call})`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(p.alive, `${p.name} exited on its own while idle; last lines: ${lastLines()}`);
}

describe('`apsup run` lifetime: an idle runtime stays up until a signal, and a signal always runs the clean shutdown', () => {
  let sqlite: BackendFixture;
  let mysql: BackendFixture;
  let dir: string;

  before(async () => {
    [sqlite, mysql] = await Promise.all([createBackend('sqlite'), createBackend('mysql')]);
    dir = makeFixtureDir('lifetime');
  });

  after(async () => {
    killEverything();
    await sqlite?.cleanup();
    await mysql?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('SQLite, role all, nothing to do: stays up; SIGTERM invalidates the term and releases the host lock', async () => {
    const file = (sqlite.target as { file: string }).file;
    const host = new RuntimeProcess('sqlite-idle', { url: sqlite.url, fixtureDir: dir });
    const started = await host.waitForMsg('supervisor started', { supervisorKey: 'global' });
    assert.ok(fs.existsSync(`${file}.host.lock`), 'the running host holds the lock');
    await staysUp(host);
    const exit = await host.stop();
    assert.equal(exit.code, 0);
    assert.ok(host.own('shut down').length === 1, 'the shutdown ran');
    const lease = await sqlite.store.readLease('global');
    assert.equal(lease.holderId, null, 'the permanent SQLite term is invalidated at shutdown');
    assert.ok(lease.supervisorGeneration > started.supervisorGeneration);
    assert.equal(fs.existsSync(`${file}.host.lock`), false, 'the host lock is released');
  });

  // Regression test: runUntilSignal (src/cli/run.ts) installs its SIGINT/SIGTERM handlers before
  // runtime.start(). Before that fix they came only after the runtime's and the durable task
  // runner's start, so a SIGTERM once the term was held but before that point (a stop during
  // start-up, or the runtime's own fatal self-SIGTERM) took the default action: the process died
  // without the clean shutdown, leaving the SQLite permanent term valid (and, on MySQL, the lease
  // held until it expired).
  for (const backend of ['sqlite', 'mysql'] as const) {
    test(`${backend}: a SIGTERM as soon as the term is held still runs the clean shutdown (term invalidated)`, async () => {
      const fx = backend === 'sqlite' ? sqlite : mysql;
      const before = await fx.store.readLease('global').catch(() => null);
      const host = new RuntimeProcess(`early-sigterm-${backend}`, { url: fx.url, fixtureDir: dir, role: backend === 'mysql' ? 'background' : 'all' });
      const acquired = await host.waitForLog(
        (l) => l.msg === 'term acquired; recovering from persisted state' && l.supervisorGeneration > (before?.supervisorGeneration ?? 0),
        15_000,
        'term acquisition',
      );
      host.proc.kill('SIGTERM');
      const exit = await withTimeout(host.exited, 15_000, 'exit after SIGTERM');
      const lease = await fx.store.readLease('global');
      assert.deepEqual(
        { code: exit.code, signal: exit.signal, shutDown: host.own('shut down').length, holder: lease.holderId },
        { code: 0, signal: null, shutDown: 1, holder: null },
        `the SIGTERM must end the process through the shutdown, not the default signal action (lease now: holder ${lease.holderId}, generation ${lease.supervisorGeneration}, acquired ${acquired.supervisorGeneration})`,
      );
      assert.ok(lease.supervisorGeneration > acquired.supervisorGeneration);
    });
  }

  test('MySQL, role api: stays up (it only accepts intents) and shuts down on SIGTERM', async () => {
    const api = new RuntimeProcess('api-idle', { url: mysql.url, fixtureDir: dir, role: 'api' });
    await api.waitForMsg('artifact processing supervisor starting', { role: 'api' });
    const candidateId = String((await api.waitForMsg('candidate fingerprint registered')).candidateId);
    // Evidence that it keeps running idle: its candidate row refreshed twice (two renewal periods).
    const expiries = new Set<string>();
    await waitFor(
      async () => {
        assert.equal(api.alive, true, `the api process exited on its own while idle: ${JSON.stringify(api.exit)}`);
        const [row] = await mysql.query(
          "SELECT DATE_FORMAT(MAX(expires_at), '%Y-%m-%d %H:%i:%s.%f') AS expires FROM pc_aps_candidate_fingerprints WHERE candidate_id = ?",
          [candidateId],
        );
        expiries.add(String(row?.expires));
        return expiries.size >= 3;
      },
      15_000,
      50,
    );
    assert.equal(api.alive, true);
    const exit = await withTimeout(api.stop(), 15_000, 'api stop');
    assert.equal(exit.code, 0);
    assert.equal(api.own('shut down').length, 1);
  });
});
