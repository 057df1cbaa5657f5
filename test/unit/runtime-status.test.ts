// The host's status (src/runtime/runtime-status.ts): each supervisor's term and renewal health,
// and the families of every supervisor's partitions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runtimeStatus } from '../../src/runtime/runtime-status.ts';
import type { Supervisor } from '../../src/runtime/supervisor.ts';
import { hostAccounts } from '../../src/store/session-accounts.ts';

const supervisor = (key: string, generation: number | null, families: string[], suspended = false) =>
  ({
    supervisorKey: key,
    term: generation === null ? null : { supervisorKey: key, holderId: 'h', supervisorGeneration: generation },
    keeper: { state: generation === null ? 'standby' : 'leader', renewalFailures: suspended ? 2 : 0, renewalFailuresTotal: 5, termChanges: 3, suspended },
    partitions: families.map((family) => ({ stats: () => ({ family }) })),
  }) as unknown as Supervisor;

test('one entry per supervisor with its term and renewal health; the families of all partitions', () => {
  const status = runtimeStatus(
    { mode: 'dedicated', role: 'all' } as never,
    'h',
    [supervisor('artifact:memory', 7, ['memory'], true), supervisor('artifact:profile', null, ['profile'])],
    hostAccounts({ backend: 'mysql', host: 'h', port: 3306, user: 'u', password: 'p', database: 'd' }),
  );
  assert.deepEqual(
    status.supervisors.map((s) => [s.supervisorKey, s.state, s.supervisorGeneration, s.renewalFailures, s.dispatchSuspended]),
    [
      ['artifact:memory', 'leader', 7, 2, true],
      ['artifact:profile', 'standby', null, 0, false],
    ],
  );
  assert.deepEqual(
    status.families.map((f) => f.family),
    ['memory', 'profile'],
  );
  assert.deepEqual([status.mode, status.role, status.holderId], ['dedicated', 'all', 'h']);
  // Children on the host's own MySQL account: only the statement checks guard, and status says so.
  assert.equal(status.fencing.setup, 'filtered');
  assert.match(status.fencing.summary, /^filtered only: one privileged account/);
});
