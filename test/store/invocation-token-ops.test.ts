// pc_aps_init_invocation_secret and pc_aps_ack_invocation_token on both backends: MySQL records
// the first candidate and checks the token inside the business transaction; SQLite keeps no
// secret and checks none (its processors cannot reach the acknowledgement from SQL), and both
// acknowledge exactly as pc_aps_ack_invocation does.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { invocationToken, secretCandidate } from '../../src/store/invocation-token.ts';
import { BACKENDS, createBackend } from '../helpers/backends.ts';
import { takeTerm } from '../helpers/store-asserts.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] the token-bound acknowledgement`, () => {
    test('the secret is recorded once; the token acknowledges its own invocation only (MySQL)', async () => {
      const fx = await createBackend(backend);
      try {
        const first = secretCandidate();
        const secret = await fx.store.initInvocationSecret(first);
        assert.equal(secret, first);
        const again = await fx.store.initInvocationSecret(secretCandidate());
        if (backend === 'mysql') assert.equal(again, first, 'the first host wins');
        const term = await takeTerm(fx.store, 'h-tok');
        await fx.store.acceptRequest('tok.b', 'a');
        await fx.store.acceptRequest('tok.b', 'b');
        const ack = (scopeId: string) => ({ bindingName: 'tok.b', scopeId, claimedRequestGeneration: 1, cleanThroughDirtyGeneration: null });
        const tokenA = invocationToken(secret, term, 'tok.b', 'a', 1);
        const r = await fx.store.fencedTransaction(term, (tx) => fx.store.ackInvocationWithToken(term, ack('a'), tokenA, tx));
        assert.deepEqual([r.outcome, r.handledGeneration], ['acknowledged', 1]);
        const wrong = fx.store.fencedTransaction(term, (tx) => fx.store.ackInvocationWithToken(term, ack('b'), tokenA, tx));
        if (backend === 'mysql') {
          await assert.rejects(wrong, (e: { code?: string }) => e.code === 'invocation_token_mismatch');
          assert.equal((await fx.store.readIntent('tok.b', 'b'))!.handledGeneration, 0);
        } else {
          assert.equal((await wrong).outcome, 'acknowledged');
        }
        await assert.rejects(fx.store.ackInvocationWithToken(term, ack('a'), 'not-hex'), /64 hexadecimal characters/);
      } finally {
        await fx.cleanup();
      }
    });
  });
}
