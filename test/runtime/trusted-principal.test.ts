// RFC 6, acceptance 13/14: the processor wrapper restores the deployment's trusted background
// principal, configured by POWERCONTEXT_SERVER_RUNTIME_TRUSTED_PRINCIPAL_ID. The host resolves
// it per family and sends it with each invocation: a worker child gets it as data, whatever its
// own environment says.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { FIXTURES_DIR, P, startRuntime, testFamily } from '../fixtures/runtime-harness.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';

const PRINCIPAL_PROCESSOR = path.join(FIXTURES_DIR, 'processors', 'principal.ts');

describe('[sqlite] the trusted principal a processor receives', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function principalOf(env: Record<string, string>, family: string): Promise<Record<string, unknown>> {
    assert.equal(process.env[`${P}TRUSTED_PRINCIPAL_ID`], undefined, 'precondition: unset in this process');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-principal-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const fx: BackendFixture = await createBackend('sqlite');
    cleanups.push(() => fx.cleanup());
    const runtime: Runtime = await startRuntime(fx, [testFamily(family, { processorModule: PRINCIPAL_PROCESSOR })], {
      env,
      // The child's own environment says something else: the invocation's data wins.
      workerEnv: { APSUP_TEST_PRINCIPAL_DIR: dir, [`${P}TRUSTED_PRINCIPAL_ID`]: 'from-the-child-env' },
    });
    cleanups.push(() => runtime.stop());
    await runtime.trigger(family, 's1');
    const file = path.join(dir, 's1.json');
    await waitFor(() => fs.existsSync(file), 20_000);
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  }

  test('by default apsup-background:<family>, as before the setting existed', async () => {
    const seen = await principalOf({}, 'fx-principal');
    assert.deepEqual(seen.principal, { kind: 'background', id: 'apsup-background:fx-principal', family: 'fx-principal' });
    assert.equal(seen.frozen, true);
  });

  test('the configured id, {family} standing for the family, sent as data to the child', async () => {
    const seen = await principalOf({ [`${P}TRUSTED_PRINCIPAL_ID`]: 'svc:powercontext-runtime/{family}@tenant-a' }, 'fx-principal-b');
    assert.deepEqual(seen.principal, { kind: 'background', id: 'svc:powercontext-runtime/fx-principal-b@tenant-a', family: 'fx-principal-b' });
    assert.equal(seen.env, 'from-the-child-env', 'the child had another value in its environment');
  });
});
