// The contract suite: every file of this folder registers its part for one backend; the two
// entries (test/contract/sqlite.test.ts, test/contract/mysql.test.ts) run it once per backend,
// each in one test process (one migrated template, reused databases).
import type { Backend } from '../../../src/store/types.ts';
import { register as acknowledgeBatch } from './acknowledge-batch.ts';
import { register as fenceSlots } from './fence-slots.ts';
import { register as fencedTransaction } from './fenced-transaction.ts';
import { register as fencingProcesses } from './fencing-processes.ts';
import { register as intents } from './intents.ts';
import { register as model } from './model.ts';
import { register as mysqlSession } from './mysql-session.ts';
import { register as pausedWorker } from './paused-worker.ts';
import { register as queryPlans } from './query-plans.ts';
import { register as readHandle } from './read-handle.ts';
import { register as readIntents } from './read-intents.ts';
import { register as renewalUnderCommit } from './renewal-under-commit.ts';
import { register as scans } from './scans.ts';
import { register as smoke } from './smoke.ts';
import { register as sqliteHostLockWait } from './sqlite-host-lock-wait.ts';
import { register as terms } from './terms.ts';

const SUITES: Array<(backend: Backend) => void> = [
  acknowledgeBatch,
  fenceSlots,
  fencedTransaction,
  fencingProcesses,
  intents,
  model,
  mysqlSession,
  pausedWorker,
  queryPlans,
  readHandle,
  readIntents,
  renewalUnderCommit,
  scans,
  smoke,
  sqliteHostLockWait,
  terms,
];

export function registerContract(backend: Backend): void {
  for (const register of SUITES) register(backend);
}
