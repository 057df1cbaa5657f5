// The triggers a migration chain leaves (trigger-status.ts): created, dropped and re-created in
// file order; only applied migrations are expected in the database.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expectedTriggers, triggerStatus } from '../../src/migrations/trigger-status.ts';

const file = (name: string, up: string) => ({ name, up, down: null, checksum: name });
const FILES = [
  file('0001_a', 'CREATE TABLE t (id INT);\nCREATE TRIGGER t_ins AFTER INSERT ON t FOR EACH ROW UPDATE c SET n = n + 1;'),
  file(
    '0002_b',
    '-- a comment naming CREATE TRIGGER ghost\nDROP TRIGGER IF EXISTS t_ins;\nCREATE TRIGGER `t_upd` AFTER UPDATE ON t FOR EACH ROW UPDATE c SET n = n;',
  ),
  file('0003_c', 'DROP TRIGGER IF EXISTS t_ins;\ncreate trigger t_ins after insert on t for each row update c set n = n + 2;'),
];

test('a trigger dropped by a later migration is no longer expected; re-created, it is, by its last creator', () => {
  assert.deepEqual([...expectedTriggers(FILES.slice(0, 2))], [['t_upd', '0002_b']]);
  assert.deepEqual([...expectedTriggers(FILES)].sort(), [
    ['t_ins', '0003_c'],
    ['t_upd', '0002_b'],
  ]);
});

test('ok, missing (drift) or pending (its migration not applied yet)', () => {
  const applied = new Set(['0001_a', '0002_b']);
  assert.deepEqual(triggerStatus(FILES, applied, new Set(['t_upd'])), [
    { name: 't_ins', state: 'pending', detail: 'created by pending 0003_c' },
    { name: 't_upd', state: 'ok', detail: 'created by 0002_b' },
  ]);
  assert.deepEqual(
    triggerStatus(FILES, new Set([...applied, '0003_c']), new Set(['t_upd'])).map((t) => t.state),
    ['missing', 'ok'],
  );
});
