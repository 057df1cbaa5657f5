// src/config/trusted-principal.ts: the form of TRUSTED_PRINCIPAL_ID and the principal of one family.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_TRUSTED_PRINCIPAL_ID, backgroundPrincipal, trustedPrincipalId } from '../../src/config/trusted-principal.ts';

test('the default is the id processors received before it was configurable', () => {
  assert.deepEqual(backgroundPrincipal(DEFAULT_TRUSTED_PRINCIPAL_ID, 'topic-memory'), {
    kind: 'background',
    id: 'apsup-background:topic-memory',
    family: 'topic-memory',
  });
});

test('{family} stands for the family wherever it appears; an id without it is the same for every family', () => {
  assert.equal(backgroundPrincipal('svc/{family}:{family}', 'profile').id, 'svc/profile:profile');
  assert.equal(backgroundPrincipal('svc:powercontext-runtime', 'profile').id, 'svc:powercontext-runtime');
});

test('ids are letters, digits and . _ : @ / + -, at most 200 characters', () => {
  for (const ok of ['svc:runtime', 'apsup-background:{family}', 'runtime@tenant-a.example', 'spiffe://corp/ns/apsup/{family}', 'a'.repeat(200)]) {
    assert.equal(trustedPrincipalId.safeParse(ok).success, true, ok);
  }
  for (const bad of ['', 'has space', "quote'd", 'tab\tx', '{Family}', '{familyx}', 'a'.repeat(201), 'ünicode', 'x;y']) {
    const r = trustedPrincipalId.safeParse(bad);
    assert.equal(r.success, false, bad);
    assert.match(r.error!.issues[0]!.message, /letters, digits and \. _ : @ \/ \+ -/);
  }
});
