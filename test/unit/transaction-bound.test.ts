// The per-engine transaction bound of the MySQL store (COMPATIBILITY row 41): which statement
// each engine gets, from which version string, and the default of one lease TTL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundStatements, engineOf, LEASE_TTL_VARIABLE, transactionBoundFromEnv } from '../../src/store/mysql/transaction-bound.ts';

test('the engine is read from VERSION()', () => {
  assert.equal(engineOf('10.11.6-MariaDB-0+deb12u1'), 'mariadb');
  assert.equal(engineOf('5.7.25-OceanBase_CE-v4.2.1.2'), 'oceanbase');
  assert.equal(engineOf('8.0.36'), 'mysql');
  assert.equal(engineOf('8.4.0-commercial'), 'mysql');
});

test('one setting per engine: MariaDB and OceanBase per session, MySQL 8 around each transaction', () => {
  assert.deepEqual(boundStatements('mariadb', 2500), { session: ['SET SESSION idle_transaction_timeout = 3'], open: [], close: [] });
  assert.deepEqual(boundStatements('oceanbase', 2500), { session: ['SET SESSION ob_trx_idle_timeout = 2500000'], open: [], close: [] });
  assert.deepEqual(boundStatements('mysql', 2000), {
    session: [],
    open: ['SET SESSION wait_timeout = 2'],
    close: ['SET SESSION wait_timeout = @@GLOBAL.wait_timeout'],
  });
});

test('the bound is one lease TTL from the environment, 15 s (the TTL default) otherwise', () => {
  assert.equal(transactionBoundFromEnv({ [LEASE_TTL_VARIABLE]: '2' }), 2000);
  assert.equal(transactionBoundFromEnv({ [LEASE_TTL_VARIABLE]: '2.5' }), 2500);
  assert.equal(transactionBoundFromEnv({}), 15_000);
  assert.equal(transactionBoundFromEnv({ [LEASE_TTL_VARIABLE]: 'soon' }), 15_000);
});
