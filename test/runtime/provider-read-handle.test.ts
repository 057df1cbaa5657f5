// RFC 1 and 6: a pending-work provider runs in the host with a read handle the database refuses
// writes on, plus markDirty; nothing else of the store. Its reads are bounded by the discovery
// deadline and cancelled with it (MySQL: the statement is cut off on the server as well).
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, describe, test } from 'node:test';
import type { ProviderContext } from '../../src/registry/registration.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { P, bindingOf, createFixtureTables, startRuntime, testFamily } from '../fixtures/runtime-harness.ts';

const F = 'fx-provider';
const SLOW = {
  sqlite: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT COUNT(*) AS slow FROM c',
  mysql: 'SELECT COUNT(*) AS slow FROM information_schema.columns a, information_schema.columns b, information_schema.columns c',
};
type Outcome = { ok: boolean; name?: string; code?: string };

async function outcome(fn: () => Promise<unknown>): Promise<Outcome> {
  try {
    await fn();
    return { ok: true };
  } catch (error) {
    return { ok: false, name: (error as Error).name, code: (error as { code?: string }).code };
  }
}

for (const backend of BACKENDS) {
  describe(`[${backend}] the pending-work provider's database access`, () => {
    let fx: BackendFixture;
    let runtime: Runtime | undefined;
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('writes through the provider query are refused by the database; markDirty is its one write', async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await fx.query('CREATE TABLE fx_prov (a INT NOT NULL)');
      let report: Record<string, unknown> | null = null;
      const family = testFamily(F, { schedule: { kind: 'interval', seconds: 1 } });
      family.pendingWork = {
        async remarkDirty(ctx: ProviderContext) {
          const r: Record<string, unknown> = { keys: Object.keys(ctx).sort() };
          r.insert = await outcome(() => ctx.query('INSERT INTO fx_prov (a) VALUES (1)'));
          r.lease = await outcome(() => ctx.query('UPDATE pc_artifact_processing_leases SET holder_id = NULL'));
          r.call = await outcome(() => ctx.query("CALL pc_aps_invalidate_term('global', NULL, NULL)"));
          r.read = await outcome(() => ctx.query('SELECT COUNT(*) AS n FROM fx_prov'));
          await ctx.markDirty('p1');
          report ??= r;
          return 1;
        },
      };
      runtime = await startRuntime(fx, [family]);
      const r = (await waitFor(() => report, 20_000))!;
      assert.deepEqual(r.keys, ['bindingName', 'family', 'limit', 'markDirty', 'query', 'signal']);
      const refused = { ok: false, name: 'ReadOnlyError', code: 'read_only' };
      assert.deepEqual(r.insert, refused);
      assert.deepEqual(r.lease, refused);
      assert.deepEqual(r.call, refused);
      assert.deepEqual(r.read, { ok: true });
      assert.deepEqual(await fx.query('SELECT a FROM fx_prov'), []);
      const intent = await fx.store.readIntent(bindingOf(F), 'p1');
      assert.ok(intent && intent.dirtyGeneration >= 1, 'markDirty wrote the dirty mark');
      const lease = await fx.store.readLease('global');
      assert.equal(lease.holderId, runtime.holderId, 'the lease is untouched');
    });

    {
      test('a slow provider read ends at the discovery deadline without stalling the host (MySQL: also on the server)', async () => {
        await runtime?.stop();
        runtime = undefined;
        let seen: Outcome | null = null;
        const family = testFamily(`${F}-hang`, { schedule: { kind: 'interval', seconds: 1 } });
        family.pendingWork = {
          async remarkDirty(ctx: ProviderContext) {
            const started = Date.now();
            const o = await outcome(() => ctx.query(SLOW[backend]));
            seen ??= { ...o, name: `${o.name}:${Date.now() - started}` };
            return 0;
          },
        };
        runtime = await startRuntime(fx, [family], { env: { [`${P}ARTIFACT_PROCESSING_DISCOVERY_TIMEOUT_SECONDS`]: '1' } });
        const delay = monitorEventLoopDelay({ resolution: 10 });
        delay.enable();
        const o = (await waitFor(() => seen, 20_000))!;
        delay.disable();
        // A read on the host's thread would freeze it for the whole statement (minutes here).
        assert.ok(delay.max / 1e6 < 1500, `host event loop stalled ${(delay.max / 1e6).toFixed(0)} ms during the slow read`);
        assert.equal(o.ok, false);
        const elapsed = Number(String(o.name).split(':')[1]);
        assert.ok(elapsed < 3000, `the read ended at the deadline, after ${elapsed} ms`);
        if (backend === 'mysql') {
          await waitFor(
            async () =>
              Number((await fx.query("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT COUNT(*) AS slow%'"))[0].n) === 0
                ? true
                : null,
            5000,
          );
        }
      });
    }
  });
}
