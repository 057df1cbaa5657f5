// The Experience reference family end to end (src/families/experience.ts and its processor, in
// real worker processes on both backends): no source journal, a domain change version per scope
// (RFC 3: "无 Source 的处理器使用自己的领域变化版本"). Domain changes are found by the automatic
// scan and refreshed to the version read; an explicit trigger with nothing changed is a NOOP
// that still acknowledges; a later change is picked up by a later automatic check.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bumpExperience, experience, EXPERIENCE_BINDING } from '../../src/families/experience.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { P, startRuntime, statsOf } from '../fixtures/runtime-harness.ts';

async function processedVersion(fx: BackendFixture, scopeId: string): Promise<number> {
  const rows = await fx.query('SELECT processed_version FROM ref_experience_state WHERE scope_id = ?', [scopeId]);
  return rows.length === 0 ? 0 : Number(rows[0].processed_version);
}

for (const backend of BACKENDS) {
  describe(`[${backend}] experience reference family end to end`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;

    before(async () => {
      fx = await createBackend(backend);
      await bumpExperience(fx.store, 'e1');
      await bumpExperience(fx.store, 'e1');
      await bumpExperience(fx.store, 'e2');
      runtime = await startRuntime(fx, [experience], { env: { [`${P}EXPERIENCE_SCHEDULE_SECONDS`]: '1' } });
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    const settled = async (scopeId: string) => {
      const i = await fx.store.readIntent(EXPERIENCE_BINDING, scopeId);
      return i !== null && i.handledGeneration === i.requestedGeneration && i.cleanGeneration === i.dirtyGeneration;
    };

    test('the automatic scan refreshes each scope to its domain version and confirms it clean', async () => {
      await waitFor(
        async () => (await processedVersion(fx, 'e1')) === 2 && (await processedVersion(fx, 'e2')) === 1 && (await settled('e1')) && (await settled('e2')),
        30_000,
      );
      const i = await fx.store.readIntent(EXPERIENCE_BINDING, 'e1');
      assert.equal(i!.requestedGeneration, 1, 'one automatic admission covered both changes');
    });

    test('a trigger with nothing changed is a NOOP that acknowledges; a new change runs at a later check', async () => {
      const before = await fx.store.readIntent(EXPERIENCE_BINDING, 'e2');
      await runtime.trigger('experience', 'e2');
      await waitFor(async () => (await fx.store.readIntent(EXPERIENCE_BINDING, 'e2'))!.handledGeneration === before!.handledGeneration + 1, 20_000);
      assert.equal(await processedVersion(fx, 'e2'), 1, 'nothing consumed');
      await runtime.store.transaction((tx) => bumpExperience(runtime.store, 'e1', tx));
      runtime.notifyDirty('experience');
      await waitFor(async () => (await processedVersion(fx, 'e1')) === 3 && (await settled('e1')), 20_000);
      assert.deepEqual(statsOf(runtime, 'experience').failures, {}, 'no failures, no conflicts counted');
    });
  });
}
