/**
 * Helpers shared by the contract suites and the runtime tests: take the 'global' term, expect a
 * typed store error, bound a promise in time.
 */
import assert from 'node:assert/strict';
import { StoreError, type StoreErrorCode } from '../../src/store/errors.ts';
import type { Store, Term } from '../../src/store/types.ts';

/** Takes (or renews) the 'global' term for `holder`. Suites that never rely on expiry pass a long TTL: a loaded machine can outlive 30 s. */
export async function takeTerm(store: Store, holder = 'h1', ttlMs = 30_000): Promise<Term> {
  const r = await store.acquireTerm('global', holder, ttlMs);
  assert.ok(r.outcome === 'acquired' || r.outcome === 'renewed', `term not obtained: ${r.outcome}`);
  assert.equal(r.holderId, holder);
  return { supervisorKey: 'global', holderId: holder, supervisorGeneration: r.supervisorGeneration };
}

/** Expects `promise` to reject with a StoreError of `code`. */
export async function rejectsWithCode(promise: Promise<unknown>, code: StoreErrorCode): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof StoreError, `expected a StoreError(${code}), got ${String(error)}`);
    assert.equal(error.code, code);
    return true;
  });
}

/** `promise`, or an error naming `label` once `ms` passed (a hang fails the test instead of stalling it). */
export function withTimeout<T>(promise: Promise<T>, ms: number, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
