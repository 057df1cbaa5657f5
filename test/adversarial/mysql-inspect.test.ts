// Issue 40, review findings: the start-up inspection must not report "enforced by grants" when a
// privilege reaches a supervisor table some other way than a direct table grant: a column grant,
// a role (default or not), a grant to PUBLIC, a view. Each case is set up by the administrator on
// the derived processor account, and the resolution must say 'filtered'; once removed, 'grants'.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveSessionAccounts } from '../../src/store/session-accounts.ts';
import { createBackend, type BackendFixture } from '../helpers/backends.ts';

describe('[mysql] the inspection sees privileges that do not come from table grants', () => {
  let fx: BackendFixture;
  let user = '';
  const db = () => (fx.target as { database: string }).database;
  const resolve = () => resolveSessionAccounts(fx.target, {});
  before(async () => {
    fx = await createBackend('mysql');
    const accounts = await resolve();
    assert.equal(accounts.setup, 'grants', accounts.problems.join('; '));
    user = (accounts.processor as { user: string }).user;
  });
  after(async () => {
    await fx.query('DROP ROLE IF EXISTS apsup_adv_role').catch(() => undefined);
    await fx?.cleanup();
  });

  const cases: Array<{ name: string; grant: () => string[]; revoke: () => string[]; expect: RegExp }> = [
    {
      name: 'a column grant on the lease',
      grant: () => [`GRANT UPDATE (expires_at) ON \`${db()}\`.pc_artifact_processing_leases TO '${user}'@'%'`],
      revoke: () => [`REVOKE UPDATE (expires_at) ON \`${db()}\`.pc_artifact_processing_leases FROM '${user}'@'%'`],
      expect: /UPDATE on columns of pc_artifact_processing_leases/,
    },
    {
      name: 'a default role with UPDATE on the lease',
      grant: () => [
        'CREATE ROLE IF NOT EXISTS apsup_adv_role',
        `GRANT UPDATE ON \`${db()}\`.pc_artifact_processing_leases TO apsup_adv_role`,
        `GRANT apsup_adv_role TO '${user}'@'%'`,
        `SET DEFAULT ROLE apsup_adv_role FOR '${user}'@'%'`,
      ],
      revoke: () => [`SET DEFAULT ROLE NONE FOR '${user}'@'%'`, 'DROP ROLE apsup_adv_role'],
      expect: /the role apsup_adv_role|allows UPDATE on pc_artifact_processing_leases/,
    },
    {
      name: 'a grant to PUBLIC',
      grant: () => [`GRANT UPDATE ON \`${db()}\`.pc_artifact_processing_leases TO PUBLIC`],
      revoke: () => [`REVOKE UPDATE ON \`${db()}\`.pc_artifact_processing_leases FROM PUBLIC`],
      expect: /the server allows UPDATE on pc_artifact_processing_leases/,
    },
    {
      name: 'a view over the intents',
      grant: () => [
        `CREATE VIEW \`${db()}\`.adv_intents AS SELECT * FROM \`${db()}\`.pc_artifact_processing_intents`,
        `GRANT SELECT ON \`${db()}\`.adv_intents TO '${user}'@'%'`,
      ],
      revoke: () => [`DROP VIEW \`${db()}\`.adv_intents`],
      expect: /a privilege on the view adv_intents/,
    },
  ];
  for (const c of cases) {
    test(`${c.name}: filtered, then grants again once removed`, async () => {
      for (const sql of c.grant()) await fx.query(sql);
      try {
        const a = await resolveSessionAccounts(fx.target, {}, { provision: false });
        assert.equal(a.setup, 'filtered');
        assert.match(a.problems.join('; '), c.expect);
      } finally {
        for (const sql of c.revoke()) await fx.query(sql);
      }
      const again = await resolveSessionAccounts(fx.target, {}, { provision: false });
      assert.equal(again.setup, 'grants', again.problems.join('; '));
    });
  }
});
