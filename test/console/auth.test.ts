// auth.ts: who may read and who may act.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actionAccess, bearerToken, isLoopbackAddress, isLoopbackHost, readAccess, tokenMatches } from '../../src/console/auth.ts';

const T = 'operator-token-0123456789';

test('tokens compare whole, any length', () => {
  assert.equal(tokenMatches(T, T), true);
  assert.equal(tokenMatches(T, `${T}x`), false);
  assert.equal(tokenMatches(T, T.slice(0, -1)), false);
  assert.equal(tokenMatches(T, ''), false);
});

test('bearer header parsing', () => {
  assert.equal(bearerToken(`Bearer ${T}`), T);
  assert.equal(bearerToken(`bearer   ${T} `), T);
  assert.equal(bearerToken(T), undefined);
  assert.equal(bearerToken('Basic abc'), undefined);
  assert.equal(bearerToken(undefined), undefined);
});

test('actions: 401 without a token, 403 with a wrong one or when none is configured', () => {
  assert.deepEqual(actionAccess(T, `Bearer ${T}`), { ok: true });
  assert.equal((actionAccess(T, undefined) as { status: number }).status, 401);
  assert.equal((actionAccess(T, 'Bearer nope') as { status: number }).status, 403);
  assert.equal((actionAccess(undefined, undefined) as { status: number }).status, 401);
  assert.equal((actionAccess(undefined, `Bearer ${T}`) as { status: number }).status, 403);
});

test('reads: open to loopback clients naming a loopback host, else the token', () => {
  const loop = { remoteAddress: '127.0.0.1', host: '127.0.0.1:9465', authorization: undefined };
  assert.deepEqual(readAccess(undefined, loop), { ok: true });
  assert.deepEqual(readAccess(undefined, { ...loop, remoteAddress: '::ffff:127.0.0.1', host: 'localhost:9465' }), { ok: true });
  assert.deepEqual(readAccess(undefined, { ...loop, remoteAddress: '::1', host: '[::1]:9465' }), { ok: true });
  // DNS rebinding: a loopback connection that names another host is not trusted.
  assert.equal((readAccess(undefined, { ...loop, host: 'evil.example:9465' }) as { status: number }).status, 403);
  assert.equal((readAccess(undefined, { ...loop, remoteAddress: '10.0.0.5' }) as { status: number }).status, 403);
  assert.equal((readAccess(T, { ...loop, remoteAddress: '10.0.0.5' }) as { status: number }).status, 401);
  assert.deepEqual(readAccess(T, { remoteAddress: '10.0.0.5', host: 'ops.example', authorization: `Bearer ${T}` }), { ok: true });
  assert.equal(isLoopbackAddress('128.0.0.1'), false);
  assert.equal(isLoopbackHost('127.0.0.1.evil.example'), false);
});
