// One understanding across processes (RFC 8, 10): every candidate of a supervisor key records
// the fingerprint of what it runs with (binding -> family map and trigger capabilities; the
// background roles also schedule, budget and timeout), and a start whose fingerprint differs
// from a live candidate's is refused (exit 2) naming the first difference. The api role needs
// no processor files and no execution settings. MySQL: several processes; SQLite: one host
// process (the host lock), so a start replaces what a stopped or crashed host left.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parseRuntimeConfig } from '../../src/config/runtime-config.ts';
import { createLogger } from '../../src/logging.ts';
import { CandidateRegistration, FingerprintMismatchError } from '../../src/registry/candidates.ts';
import type { FamilyRegistration } from '../../src/registry/registration.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import families from '../fixtures/failover/families.ts';
import alphaOnly from '../fixtures/failover/families-alpha-only.ts';
import { API_FAMILIES_MODULE_PATH } from '../fixtures/failover/families-api.ts';
import { RuntimeProcess, killEverything, makeFixtureDir, withTimeout } from '../fixtures/failover/harness.ts';

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
