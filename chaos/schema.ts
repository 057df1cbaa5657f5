/**
 * The suite's own tables in the trial database (created after the migrations): the input journal,
 * the business output and cursor of the workload processor, and a lease history kept by triggers
 * on pc_artifact_processing_leases (every insert and update, with the database time of the change
 * as the changing transaction saw it: SYSDATE(6) on MySQL, which is read after the row lock).
 */
import type { Backend } from '../src/store/types.ts';

export type Exec = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

const HISTORY_COLUMNS = 'supervisor_key, holder_id, supervisor_generation, expires_at, at';

export function nowExpr(backend: Backend): string {
  return backend === 'sqlite' ? "strftime('%Y-%m-%d %H:%M:%f', 'now')" : "DATE_FORMAT(SYSDATE(6), '%Y-%m-%d %H:%i:%s.%f')";
}

/** UTC database time with sub-second digits (the task lease is kept in UTC, ms precision). */
export function utcNowExpr(backend: Backend): string {
  return backend === 'sqlite' ? "strftime('%Y-%m-%d %H:%M:%f', 'now')" : "DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%d %H:%i:%s.%f')";
}

const TASK_LOG_COLUMNS = 'task_id, kind, attempt_token, state, lease_expires_at, at';

/**
 * Durable-task tables: the handler's domain row and items (no unique key: a second attempt's
 * items must stay visible), and ch_task_log, one sequence for the task row's history (triggers
 * on pc_durable_tasks, kind 'row') and the handler's fenced writes (kind take/item/done).
 */
async function createTaskSchema(backend: Backend, exec: Exec, id: string): Promise<void> {
  await exec('CREATE TABLE ch_task_domain (task_id BIGINT NOT NULL PRIMARY KEY, attempt_token VARCHAR(64) NOT NULL, state VARCHAR(16) NOT NULL)');
  await exec(`CREATE TABLE ch_task_items (id ${id}, task_id BIGINT NOT NULL, item INT NOT NULL, attempt_token VARCHAR(64) NOT NULL)`);
  await exec(`CREATE TABLE ch_task_log (id ${id}, task_id BIGINT NOT NULL, kind VARCHAR(8) NOT NULL, attempt_token VARCHAR(64) NULL,
    state VARCHAR(16) NULL, lease_expires_at VARCHAR(32) NULL, at VARCHAR(32) NOT NULL)`);
  for (const event of ['INSERT', 'UPDATE']) {
    const name = `ch_task_${event.toLowerCase()}`;
    if (backend === 'sqlite') {
      await exec(`CREATE TRIGGER ${name} AFTER ${event} ON pc_durable_tasks BEGIN
        INSERT INTO ch_task_log (${TASK_LOG_COLUMNS}) VALUES (NEW.task_id, 'row', NEW.attempt_token, NEW.state, NEW.lease_expires_at, ${utcNowExpr(backend)}); END`);
    } else {
      await exec(`CREATE TRIGGER ${name} AFTER ${event} ON pc_durable_tasks FOR EACH ROW
        INSERT INTO ch_task_log (${TASK_LOG_COLUMNS}) VALUES (NEW.task_id, 'row', NEW.attempt_token, NEW.state,
          DATE_FORMAT(NEW.lease_expires_at, '%Y-%m-%d %H:%i:%s.%f'), ${utcNowExpr(backend)})`);
    }
  }
}

export async function createSuiteSchema(backend: Backend, exec: Exec): Promise<void> {
  const id = backend === 'sqlite' ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : 'BIGINT AUTO_INCREMENT PRIMARY KEY';
  await exec(`CREATE TABLE ch_inputs (family VARCHAR(64) NOT NULL, scope_id VARCHAR(64) NOT NULL, seq BIGINT NOT NULL,
    requested INT NOT NULL DEFAULT 0, PRIMARY KEY (family, scope_id, seq))`);
  await exec(
    'CREATE TABLE ch_cursors (family VARCHAR(64) NOT NULL, scope_id VARCHAR(64) NOT NULL, through_seq BIGINT NOT NULL, PRIMARY KEY (family, scope_id))',
  );
  // No unique key on purpose: a duplicate must be visible to the checker, not refused.
  await exec(`CREATE TABLE ch_outputs (id ${id}, family VARCHAR(64) NOT NULL, scope_id VARCHAR(64) NOT NULL, seq BIGINT NOT NULL,
    supervisor_generation BIGINT NOT NULL, seen_generation BIGINT NOT NULL, holder_id VARCHAR(191) NOT NULL, claimed_generation BIGINT NOT NULL,
    worker_pid BIGINT NOT NULL, written_at VARCHAR(32) NOT NULL)`);
  await exec(`CREATE TABLE ch_lease_history (id ${id}, supervisor_key VARCHAR(191) NOT NULL, holder_id VARCHAR(191) NULL,
    supervisor_generation BIGINT NOT NULL, expires_at VARCHAR(32) NULL, at VARCHAR(32) NOT NULL)`);
  for (const event of ['INSERT', 'UPDATE']) {
    const name = `ch_lease_${event.toLowerCase()}`;
    if (backend === 'sqlite') {
      await exec(`CREATE TRIGGER ${name} AFTER ${event} ON pc_artifact_processing_leases BEGIN
        INSERT INTO ch_lease_history (${HISTORY_COLUMNS}) VALUES (NEW.supervisor_key, NEW.holder_id, NEW.supervisor_generation, NEW.expires_at, ${nowExpr(backend)}); END`);
    } else {
      await exec(`CREATE TRIGGER ${name} AFTER ${event} ON pc_artifact_processing_leases FOR EACH ROW
        INSERT INTO ch_lease_history (${HISTORY_COLUMNS}) VALUES (NEW.supervisor_key, NEW.holder_id, NEW.supervisor_generation,
          DATE_FORMAT(NEW.expires_at, '%Y-%m-%d %H:%i:%s.%f'), ${nowExpr(backend)})`);
    }
  }
  await createTaskSchema(backend, exec, id);
}
