// One understanding across processes (RFC 8, 10): every candidate of a supervisor key records
// the fingerprint of what it runs with (binding -> family map and trigger capabilities; the
// background roles also schedule, budget and timeout), and a start whose fingerprint differs
// from a live candidate's is refused (exit 2) naming the first difference. The api role needs
// no processor files and no execution settings. MySQL: several processes; SQLite: one host
// process (the host lock), so a start replaces what a stopped or crashed host left.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, afterEach, before, describe, test } from 'node:test';
import { parseRuntimeConfig } from '../../src/config/runtime-config.ts';
import { createLogger } from '../../src/logging.ts';
import { sleep } from '../../src/runtime/clock.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { CandidateRegistration, FingerprintMismatchError } from '../../src/registry/candidates.ts';
import type { FamilyRegistration } from '../../src/registry/registration.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import families from '../fixtures/failover/families.ts';
import alphaOnly from '../fixtures/failover/families-alpha-only.ts';
import { API_FAMILIES_MODULE_PATH } from '../fixtures/failover/families-api.ts';
import { RuntimeProcess, TTL_MS, killEverything, makeFixtureDir, withTimeout } from '../fixtures/failover/harness.ts';

const P = 'POWERCONTEXT_SERVER_RUNTIME_';
const logger = createLogger({ level: 'silent' });

for (const backend of BACKENDS) {
  describe(`[${backend}] candidate fingerprints per supervisor key`, () => {
    let fx: BackendFixture;
    before(async () => {
      fx = await createBackend(backend);
    });
    after(async () => {
      await fx?.cleanup();
    });

    const role = backend === 'sqlite' ? 'all' : 'background';
    const candidate = (vars: Record<string, string>, regs: FamilyRegistration[] = families) =>
      new CandidateRegistration(
        fx.store,
        parseRuntimeConfig(
          {
            [`${P}DATABASE_URL`]: fx.url,
            [`${P}ARTIFACT_PROCESSING_ROLE`]: role,
            ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [`${P}${k}`, v])),
          },
          regs,
        ),
        logger,
      );
    const rowsOf = async (c: CandidateRegistration) =>
      fx.query('SELECT supervisor_key, role, execution_text FROM pc_aps_candidate_fingerprints WHERE candidate_id = ?', [c.candidateId]);

    if (backend === 'mysql') {
      // Six starts with different fingerprints at the same moment, on six connection pools: the
      // registration is serialized on the runtime row, so exactly one passes each round. (Without
      // that lock, 5 of 40 such rounds let several differing candidates register.)
      test('concurrent differing starts: exactly one registers', async () => {
        const stores = [fx.store, ...Array.from({ length: 5 }, () => fx.openStore())];
        const on = (store: typeof fx.store, workers: string) =>
          new CandidateRegistration(
            store,
            parseRuntimeConfig(
              {
                [`${P}DATABASE_URL`]: fx.url,
                [`${P}ARTIFACT_PROCESSING_ROLE`]: 'background',
                [`${P}FO_ALPHA_MAX_WORKERS`]: workers,
              },
              families,
            ),
            logger,
          );
        for (let round = 0; round < 30; round += 1) {
          const pair = stores.map((store, i) => on(store, String(i + 2)));
          const results = await Promise.allSettled(pair.map((c) => c.register()));
          const passed = results.filter((r) => r.status === 'fulfilled').length;
          assert.equal(passed, 1, `round ${round}: ${JSON.stringify(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'registered')))}`);
          for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof FingerprintMismatchError, String(r.reason));
          for (const c of pair) await c.withdraw();
        }
      });

      test('a differing start is refused naming the first difference; the api role is compared on the shared part only', async () => {
        const a = candidate({ FO_ALPHA_MAX_WORKERS: '4' });
        await a.register();
        const [row] = await rowsOf(a);
        assert.deepEqual([row!.supervisor_key, row!.role], ['global', 'background']);
        assert.match(String(row!.execution_text), /"family fo-alpha maxWorkers":"4"/);

        const b = candidate({ FO_ALPHA_MAX_WORKERS: '8' });
        await assert.rejects(
          b.register(),
          (e: unknown) =>
            e instanceof FingerprintMismatchError &&
            e.message.includes(`live candidate ${a.candidateId}`) &&
            e.message.includes('family fo-alpha maxWorkers is 8 here, 4 there'),
        );
        assert.deepEqual(await rowsOf(b), [], 'a refused start leaves no row');
        const schedule = candidate({ FO_BETA_SCHEDULE_SECONDS: '60' });
        await assert.rejects(schedule.register(), (e: unknown) => e instanceof FingerprintMismatchError && e.message.includes('family fo-beta schedule'));

        // api: no execution part, so another budget is fine; another binding map is not.
        const api = candidate({ ARTIFACT_PROCESSING_ROLE: 'api', FO_ALPHA_MAX_WORKERS: '8' });
        await api.register();
        assert.equal((await rowsOf(api))[0]!.execution_text, null);
        const apiAlpha = candidate({ ARTIFACT_PROCESSING_ROLE: 'api' }, alphaOnly);
        await assert.rejects(
          apiAlpha.register(),
          (e: unknown) =>
            e instanceof FingerprintMismatchError &&
            /first difference: binding fo-beta\.items family is \(absent\) here, fo-beta there|first difference: bindings/.test(e.message),
        );

        // Once the live candidates are gone, the other configuration may start.
        await a.withdraw();
        await api.withdraw();
        await b.register();
        await b.withdraw();
      });

      // Rows that expired (as after a pause past the TTL) are registered again at the next
      // refresh, one statement at a time even when each one outlasts the renewal period, and a
      // withdrawal waits for the one in flight (else its INSERT could land after the DELETE).
      // The refreshes run on a manual clock; the database clock alone expires the rows.
      test('expired rows: registered again, or refused by a differing live candidate; refreshes never overlap', async () => {
        const clock = new ManualClock();
        // Registrations and refreshes take 250 ms of the manual clock (> the 0.05 s renewal
        // period); withdrawals none.
        let inFlight = 0;
        let most = 0;
        let registering = 0;
        let calls = 0;
        const slow = {
          callOperation: async (op: string, params: unknown) => {
            const call = () => (fx.store as unknown as { callOperation: (o: string, p: unknown) => Promise<unknown[][]> }).callOperation(op, params);
            calls += 1;
            if (op === 'pc_aps_withdraw_candidate') return call();
            inFlight += 1;
            most = Math.max(most, inFlight);
            if (op === 'pc_aps_register_candidate') registering += 1;
            try {
              await sleep(clock, 250);
              return await call();
            } finally {
              inFlight -= 1;
              if (op === 'pc_aps_register_candidate') registering -= 1;
            }
          },
        };
        /** Advances the manual clock in renewal periods (real I/O runs between steps) until `done`. */
        const drive = async (done: () => boolean | Promise<boolean>, what: string) => {
          for (let step = 0; step < 2000; step += 1) {
            if (await done()) return;
            await clock.advance(50);
            await new Promise((r) => setTimeout(r, 2));
          }
          assert.fail(`not reached: ${what}`);
        };
        const settled = (p: Promise<unknown>) => {
          let over = false;
          void p.then(
            () => {
              over = true;
            },
            () => {
              over = true;
            },
          );
          return () => over;
        };
        const warnings: string[] = [];
        const capture = {
          info: () => undefined,
          warn: (_o: unknown, msg: string) => warnings.push(msg),
          error: (_o: unknown, msg: string) => warnings.push(`error: ${msg}`),
        };
        const tuning = { LEASE_TTL_SECONDS: '2', RENEW_SECONDS: '0.05', FO_ALPHA_MAX_WORKERS: '4' };
        const env = (vars: Record<string, string>) =>
          parseRuntimeConfig(
            {
              [`${P}DATABASE_URL`]: fx.url,
              [`${P}ARTIFACT_PROCESSING_ROLE`]: 'background',
              ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [`${P}${k.startsWith('FO_') ? k : `ARTIFACT_PROCESSING_${k}`}`, v])),
            },
            families,
          );
        const a = new CandidateRegistration(slow as never, env(tuning), capture as never, clock);
        const conflicts: FingerprintMismatchError[] = [];
        a.onConflict = (e) => conflicts.push(e);
        const registered = a.register();
        await drive(settled(registered), 'the first registration');
        await registered;
        const expire = () => fx.query('UPDATE pc_aps_candidate_fingerprints SET expires_at = UTC_TIMESTAMP(3) WHERE candidate_id = ?', [a.candidateId]);
        const live = async () =>
          (await fx.query('SELECT candidate_id FROM pc_aps_candidate_fingerprints WHERE candidate_id = ? AND expires_at > UTC_TIMESTAMP(3)', [a.candidateId]))
            .length;

        await expire();
        await drive(() => warnings.includes('candidate fingerprint registered again'), 'registered again');
        assert.equal(await live(), 1);
        assert.equal(most, 1, 'one refresh or registration at a time');
        assert.deepEqual(warnings, ['candidate fingerprint registered again']);

        // A withdrawal during a registration again leaves no row behind, and nothing runs after it.
        await expire();
        await drive(() => registering > 0, 'a registration again in flight');
        const withdrawn = a.withdraw();
        await drive(settled(withdrawn), 'the withdrawal');
        await withdrawn;
        const afterWithdraw = calls;
        for (let i = 0; i < 20; i += 1) await clock.advance(50);
        assert.equal(inFlight, 0);
        assert.equal(calls, afterWithdraw, 'no statement after the withdrawal');
        assert.deepEqual(await rowsOf(a), []);

        // Expired while another configuration registered: refused once, rows gone, no more refreshes.
        const c = new CandidateRegistration(slow as never, env(tuning), capture as never, clock);
        c.onConflict = (e) => conflicts.push(e);
        const cRegistered = c.register();
        await drive(settled(cRegistered), "c's registration");
        await cRegistered;
        await fx.query('UPDATE pc_aps_candidate_fingerprints SET expires_at = UTC_TIMESTAMP(3) WHERE candidate_id = ?', [c.candidateId]);
        const other = candidate({ FO_ALPHA_MAX_WORKERS: '8' });
        await other.register();
        await drive(() => conflicts.length > 0 && inFlight === 0, 'the conflict');
        assert.match(
          conflicts[0]!.message,
          new RegExp(`^stopping: .*live candidate ${other.candidateId} .*first difference: family fo-alpha maxWorkers is 4 here, 8 there`),
        );
        assert.deepEqual(await rowsOf(c), []);
        const afterConflict = calls;
        for (let i = 0; i < 20; i += 1) await clock.advance(50);
        assert.equal(calls, afterConflict, 'no refresh after the conflict');
        assert.equal(conflicts.length, 1);
        assert.equal(most, 1);
        await c.withdraw();
        await other.withdraw();
      });
    } else {
      test('one host process: a start records its fingerprint and replaces what a stopped host left', async () => {
        const old = candidate({ FO_ALPHA_MAX_WORKERS: '4' });
        await old.register();
        const now = candidate({ FO_ALPHA_MAX_WORKERS: '8' });
        await now.register();
        assert.deepEqual(await rowsOf(old), []);
        const [row] = await rowsOf(now);
        assert.deepEqual([row!.supervisor_key, row!.role], ['global', 'all']);
        assert.match(String(row!.execution_text), /"family fo-alpha maxWorkers":"8"/);
        await now.withdraw();
        assert.deepEqual(await rowsOf(now), []);
      });
    }
  });
}

describe('[mysql] processes: a background candidate with another budget exits 2; an api process needs no processor files', () => {
  let fx: BackendFixture;
  let dir: string;
  before(async () => {
    fx = await createBackend('mysql');
    dir = makeFixtureDir('fingerprints');
  });
  after(async () => {
    killEverything();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('refused start names the difference; api with missing processor modules starts', async () => {
    const a = new RuntimeProcess('fp-a', { url: fx.url, fixtureDir: dir, role: 'background', env: { [`${P}FO_ALPHA_MAX_WORKERS`]: '4' } });
    await a.waitForMsg('candidate fingerprint registered', {}, 45_000);
    const b = new RuntimeProcess('fp-b', { url: fx.url, fixtureDir: dir, role: 'background', env: { [`${P}FO_ALPHA_MAX_WORKERS`]: '8' } });
    assert.equal((await withTimeout(b.exited, 45_000, 'refused start')).code, 2, b.stderr);
    assert.match(b.stderr, /supervisor key global has a live candidate .* first difference: family fo-alpha maxWorkers is 8 here, 4 there/);
    assert.equal(b.own('supervisor started').length, 0);

    // A's row stayed live past the 2 s TTL while it ran (refreshed every renewal period); a
    // crashed candidate (SIGKILL, no withdrawal) stops counting once its row expires.
    a.killHard();
    await withTimeout(a.exited, 10_000, 'killed');
    await waitFor(
      async () => (await fx.query('SELECT candidate_id FROM pc_aps_candidate_fingerprints WHERE expires_at > UTC_TIMESTAMP(3)')).length === 0,
      10_000,
      100,
    );
    const b2 = new RuntimeProcess('fp-b2', { url: fx.url, fixtureDir: dir, role: 'background', env: { [`${P}FO_ALPHA_MAX_WORKERS`]: '8' } });
    await b2.waitForMsg('candidate fingerprint registered', {}, 45_000);

    const api = new RuntimeProcess('fp-api', {
      url: fx.url,
      fixtureDir: dir,
      role: 'api',
      familiesModule: API_FAMILIES_MODULE_PATH,
      env: { [`${P}FO_ALPHA_MAX_WORKERS`]: '5' },
    });
    await api.waitForMsg('candidate fingerprint registered', {}, 45_000);
    assert.equal((await api.stop()).code, 0, api.stderr);
    assert.equal((await b2.stop()).code, 0, b2.stderr);
    assert.deepEqual(await fx.query('SELECT candidate_id FROM pc_aps_candidate_fingerprints'), [], 'stopped candidates withdrew');
  });
});

// A candidate paused (SIGSTOP) past the TTL loses its rows: a start with another fingerprint may
// be accepted meanwhile (RFC 8, 10). Resumed, the candidate registers again at its next refresh:
// refused, it stops the clean way (exit 2); alone, it goes on with live rows.
describe('[mysql] processes: a candidate paused past the TTL registers again when resumed', () => {
  const TERM_ACQUIRED = 'term acquired; recovering from persisted state';
  const EXPIRED = /candidate fingerprint expired/;
  let fx: BackendFixture;
  let dir: string;
  let paused: RuntimeProcess | null = null;
  before(async () => {
    fx = await createBackend('mysql');
    dir = makeFixtureDir('fingerprints-pause');
  });
  afterEach(async () => {
    // A failed assertion must not leave a stopped process group behind.
    if (paused) {
      try {
        process.kill(-paused.pid, 'SIGCONT');
      } catch {
        /* gone */
      }
      paused = null;
    }
    killEverything();
    await fx.query('DELETE FROM pc_aps_candidate_fingerprints');
  });
  after(async () => {
    killEverything();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const start = (name: string, workers: string) =>
    new RuntimeProcess(name, { url: fx.url, fixtureDir: dir, role: 'background', env: { [`${P}FO_ALPHA_MAX_WORKERS`]: workers } });
  const liveRows = (candidateId: string) =>
    fx.query('SELECT supervisor_key FROM pc_aps_candidate_fingerprints WHERE candidate_id = ? AND expires_at > UTC_TIMESTAMP(3)', [candidateId]);
  /** SIGSTOP of the whole process group (runtime and workers) until the database clock passed the rows' expiry. */
  async function pausePastTtl(p: RuntimeProcess, candidateId: string): Promise<void> {
    process.kill(-p.pid, 'SIGSTOP');
    paused = p;
    await waitFor(async () => (await liveRows(candidateId)).length === 0, 15_000, 100);
  }
  /**
   * Resolves once the database clock passed a TTL from now with the candidate's row live: only a
   * refresh after now can have kept it (evidence instead of a pause of 2 TTLs).
   */
  async function refreshedPastTtl(candidateId: string): Promise<void> {
    const [{ horizon }] = await fx.query("SELECT DATE_FORMAT(UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, '%Y-%m-%d %H:%i:%s.%f') AS horizon", [TTL_MS * 1000]);
    await waitFor(
      async () =>
        (
          await fx.query('SELECT 1 FROM pc_aps_candidate_fingerprints WHERE candidate_id = ? AND expires_at > ? AND UTC_TIMESTAMP(3) > ?', [
            candidateId,
            horizon,
            horizon,
          ])
        ).length > 0,
      15_000,
      50,
    );
  }
  function resume(p: RuntimeProcess): void {
    process.kill(-p.pid, 'SIGCONT');
    paused = null;
  }
  function groupAlive(pgid: number): boolean {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }

  test('another configuration started meanwhile: the resumed candidate is refused, logs fatal and exits 2; the other runs on', async () => {
    const a = start('fp-pause-a', '4');
    const registered = await a.waitForMsg('candidate fingerprint registered', {}, 45_000);
    await a.waitForMsg(TERM_ACQUIRED, {}, 20_000);
    await pausePastTtl(a, String(registered.candidateId));

    const b = start('fp-pause-b', '8');
    const bRegistered = await b.waitForMsg('candidate fingerprint registered', {}, 45_000);
    await b.waitForMsg(TERM_ACQUIRED, {}, 20_000);
    resume(a);

    const exit = await withTimeout(a.exited, 30_000, 'the resumed candidate with the other configuration exits');
    assert.equal(exit.code, 2, `exit ${JSON.stringify(exit)}; stderr: ${a.stderr.slice(-2000)}`);
    const fatal = a.own().filter((l) => l.level === 60);
    assert.equal(fatal.length, 1, JSON.stringify(fatal));
    assert.match(
      `${fatal[0]!.msg} ${fatal[0]!.err ?? ''}`,
      new RegExp(`live candidate ${bRegistered.candidateId} .*first difference: family fo-alpha maxWorkers is 4 here, 8 there`),
    );
    assert.match(a.stderr, /^apsup: stopping: supervisor key global has a live candidate .* first difference: family fo-alpha maxWorkers is 4 here, 8 there/m);
    assert.equal(a.own(EXPIRED).length, 0, 'no repeated expiry line');
    assert.equal(a.own('shut down').length, 1, `the clean shutdown: ${JSON.stringify(a.own().slice(-6))}`);
    // Its workers stopped with it (the whole process group is gone).
    await waitFor(async () => !groupAlive(a.pid), 10_000, 100);
    assert.deepEqual(await liveRows(String(registered.candidateId)), [], 'the refused candidate left no live row');

    // B keeps running, its row live. (Not asserted: that it never loses its term; on a loaded
    // machine a renewal may miss its deadline, which is another matter.)
    await refreshedPastTtl(String(bRegistered.candidateId));
    assert.ok(b.alive, b.stderr);
    assert.equal((await liveRows(String(bRegistered.candidateId))).length, 1);
    assert.equal((await b.stop()).code, 0, b.stderr);
  });

  test('nothing started meanwhile: the resumed candidate registers again (one warning) and runs on', async () => {
    const a = start('fp-alone', '4');
    const registered = await a.waitForMsg('candidate fingerprint registered', {}, 45_000);
    const id = String(registered.candidateId);
    await a.waitForMsg(TERM_ACQUIRED, {}, 20_000);
    await pausePastTtl(a, id);
    resume(a);

    const again = await a.waitForMsg('candidate fingerprint registered again', {}, 20_000);
    assert.equal(again.level, 40);
    assert.equal((await liveRows(id)).length, 1, 'its row is live again');
    // Past another TTL: still running, its row kept live by the refresh, no error line. (The
    // warning's count is not asserted: on a loaded machine a stall past the TTL is another expiry.)
    await refreshedPastTtl(id);
    assert.ok(a.alive, a.stderr);
    await waitFor(async () => (await liveRows(id)).length === 1, 5_000, 100);
    assert.deepEqual(
      a.own().filter((l) => l.level >= 50 || EXPIRED.test(l.msg ?? '')),
      [],
    );
    assert.equal((await a.stop()).code, 0, a.stderr);
    assert.deepEqual(await fx.query('SELECT candidate_id FROM pc_aps_candidate_fingerprints WHERE candidate_id = ?', [id]), [], 'withdrawn at shutdown');
  });
});
