/**
 * Durable task operations that change no running attempt: reads and listing, deletion and pruning,
 * the lost attempts a reconciler looks for, readiness publication, the wake-up probe and the
 * database claim cap (ADR T6). TaskStore adds the attempt's life; every decision is taken in SQL.
 */
import type { BaseStore } from '../store/base-store.ts';
import type { OperationName } from '../store/operations.ts';
import type { Params } from '../store/params.ts';
import { dbTime, toDbTime, type Row } from '../store/rows.ts';
import { InvalidArgumentError } from '../store/errors.ts';
import type { TxHandle } from '../store/types.ts';
import { n, nOrNull, requireId, requireRange, requireWorker, toDetail, toSummary, typeList } from './task-rows.ts';
import { TERMINAL_STATES, type TaskDetail, type TaskState, type TaskSummary } from './task-types.ts';

export class TaskAdminStore {
  constructor(readonly store: BaseStore) {}

  /** The last result set of an operation (its rows), or none. */
  protected async rows(op: OperationName, params: Params, tx?: TxHandle): Promise<Row[]> {
    const sets = await this.store.callOperation(op, params, tx);
    return sets.length === 0 ? [] : sets[sets.length - 1];
  }

  transaction<T>(fn: (tx: TxHandle) => Promise<T> | T): Promise<T> {
    return this.store.transaction(fn);
  }

  /** Lost attempts (expired leases) of taskTypes: a worker reconciles only types whose hooks it has. */
  async listLost(
    limit: number,
    taskTypes: readonly string[],
  ): Promise<Array<{ taskId: number; taskType: string; handlerVersion: number; attemptToken: string }>> {
    const op = 'pc_task_list_lost';
    requireRange(op, 'limit', limit, 1, 1000);
    return (await this.rows(op, { page_limit: limit, task_types: typeList(op, taskTypes) })).map((r) => ({
      taskId: n(r.task_id),
      taskType: String(r.task_type),
      handlerVersion: n(r.handler_version),
      attemptToken: String(r.attempt_token),
    }));
  }

  async list(
    options: { beforeTaskId?: number | null; limit?: number; state?: TaskState | null } = {},
  ): Promise<{ tasks: TaskSummary[]; nextBeforeTaskId: number | null }> {
    const op = 'pc_task_list';
    const limit = options.limit ?? 50;
    requireRange(op, 'limit', limit, 1, 1000);
    if (options.beforeTaskId !== undefined && options.beforeTaskId !== null) requireId(op, options.beforeTaskId);
    if (options.state && !['pending', 'running', ...TERMINAL_STATES].includes(options.state))
      throw new InvalidArgumentError(op, `unknown state ${options.state}`);
    const tasks = (await this.rows(op, { before_task_id: options.beforeTaskId ?? null, page_limit: limit, state: options.state ?? null })).map(toSummary);
    return { tasks, nextBeforeTaskId: tasks.length === limit ? tasks[tasks.length - 1].taskId : null };
  }

  async read(taskId: number, tx?: TxHandle): Promise<TaskDetail | null> {
    const op = 'pc_task_read';
    requireId(op, taskId);
    const r = (await this.rows(op, { task_id: taskId }, tx))[0];
    return r ? toDetail(r) : null;
  }

  async delete(taskId: number): Promise<void> {
    const op = 'pc_task_delete';
    requireId(op, taskId);
    await this.rows(op, { task_id: taskId });
  }

  async prune(finishedBefore: Date, limit = 1000): Promise<number> {
    const op = 'pc_task_prune';
    requireRange(op, 'limit', limit, 1, 10_000);
    const r = (await this.rows(op, { finished_before: toDbTime(finishedBefore), page_limit: limit }))[0];
    return n(r.deleted);
  }

  /**
   * prune() of the tasks that finished more than `ageMs` before the database's clock (never this
   * host's: a host clock ahead would delete tasks younger than asked).
   */
  async pruneOlderThan(ageMs: number, limit = 1000): Promise<number> {
    const { dbNow } = await this.readReadiness();
    return this.prune(new Date(dbNow.getTime() - ageMs), limit);
  }

  async publishReadiness(workerId: string, ttlMs: number): Promise<void> {
    const op = 'pc_task_publish_readiness';
    requireWorker(op, workerId);
    requireRange(op, 'ttl', ttlMs, 1000, 600_000);
    await this.rows(op, { worker_id: workerId, ttl_ms: ttlMs });
  }

  async withdrawReadiness(workerId: string): Promise<boolean> {
    const op = 'pc_task_withdraw_readiness';
    requireWorker(op, workerId);
    const r = (await this.rows(op, { worker_id: workerId }))[0];
    return n(r?.withdrawn) > 0;
  }

  /** Active tasks per state and type, reading at most cap rows (capped: the sum reached cap). */
  async countActive(cap: number): Promise<{ counts: Array<{ state: TaskState; taskType: string; n: number }>; capped: boolean }> {
    const op = 'pc_task_count_active';
    requireRange(op, 'cap', cap, 1, 1_000_000);
    const counts = (await this.rows(op, { cap })).map((r) => ({ state: String(r.state) as TaskState, taskType: String(r.task_type), n: n(r.n) }));
    return { counts, capped: counts.reduce((a, c) => a + c.n, 0) >= cap };
  }

  /** Whether a claim could take a task now: one of taskTypes is pending and the database cap is not reached (the wake-up probe). */
  async hasPending(taskTypes: readonly string[]): Promise<boolean> {
    const op = 'pc_task_probe_pending';
    const r = (await this.rows(op, { task_types: typeList(op, taskTypes) }))[0];
    return n(r?.pending) === 1;
  }

  /** Sets the database claim cap (ADR T6): the most tasks running at once across every process. */
  async setCapacity(capacity: number): Promise<{ previousCapacity: number | null; capacity: number; running: number }> {
    const op = 'pc_task_set_capacity';
    requireRange(op, 'capacity', capacity, 1, 10_000);
    const r = (await this.rows(op, { capacity }))[0];
    return { previousCapacity: nOrNull(r.previous_capacity), capacity: n(r.capacity), running: n(r.running) };
  }

  /** The database claim cap and the tasks running against it (ADR T6); null without a 'claims' row. */
  async readCapacity(): Promise<{ capacity: number | null; running: number; dbNow: Date } | null> {
    const r = (await this.rows('pc_task_read_capacity', {}))[0];
    return r ? { capacity: nOrNull(r.capacity), running: n(r.running), dbNow: dbTime(r.db_now)! } : null;
  }

  async readReadiness(): Promise<{ liveWorkers: number; latestPublishedAt: Date | null; dbNow: Date }> {
    const r = (await this.rows('pc_task_read_readiness', {}))[0];
    return { liveWorkers: n(r.live_workers), latestPublishedAt: dbTime(r.latest_published_at), dbNow: dbTime(r.db_now)! };
  }
}
