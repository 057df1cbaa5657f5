/**
 * The task API used by callers (CLI, domain code): submit validates the payload with the
 * handler's zod schema and the timeout against the worker maximum before the row is written;
 * resume creates a new task for a failed resumable one, reusing its dedupe key. A type's intent
 * hook creates or links its domain rows in the transaction that writes the task (ADR: domain
 * objects with the intent): the caller's, or one opened here. A submission
 * wakes the in-process runner after its commit: at once without a transaction, after the commit
 * of TaskService.transaction() inside one (other processes are woken by the runner's own
 * wake-up paths: the SQLite commit watch, the MySQL probe).
 */
import { InvalidArgumentError } from '../store/errors.ts';
import { txQuery } from '../store/tx-query.ts';
import type { TxHandle } from '../store/types.ts';
import type { TaskRegistry, TaskTypeDefinition } from './registry.ts';
import type { SubmitInput, SubmitResult, TaskStore } from './task-store.ts';
import { withScopedTx } from '../store/scoped-tx.ts';
import { boundedTransaction } from './bounded-transaction.ts';

/** DURABLE_TASK_FAILURE_HOOK_TIMEOUT_SECONDS' default (config.ts), for a service built without it. */
const DEFAULT_FAILURE_HOOK_TIMEOUT_MS = 10_000;

export interface SubmitRequest {
  taskType: string;
  payload: unknown;
  handlerVersion?: number;
  dedupeKey?: string | null;
  timeoutMs?: number;
}

export class TaskService {
  /** Called after a submission committed (in-process wake-up; losing it only delays to the next relay or sweep). */
  onSubmitted: (() => void) | null = null;
  /** The optional cross-process wake-up channel (src/notify/): other processes' runners probe at once. */
  notifier: { publish(topic: 'task', payload: string): void } | null = null;

  private readonly submittedIn = new WeakSet<object>();

  /**
   * The wake-up is only a hint: the task row is already committed and stays pending, so a failing
   * notification never fails the submission (a caller retrying it could create a second task).
   * A caller that submits inside its own transaction (not TaskService.transaction) calls this
   * after its commit.
   */
  notifySubmitted(taskId?: number): void {
    try {
      this.onSubmitted?.();
      this.notifier?.publish('task', taskId === undefined ? '' : String(taskId));
    } catch {
      /* the task stays pending: the next relay or sweep claims it */
    }
  }

  constructor(
    readonly tasks: TaskStore,
    readonly registry: TaskRegistry,
    private readonly limits: { maxTimeoutMs: number; defaultTimeoutMs: number; failureHookTimeoutMs?: number },
  ) {}

  private validate(request: SubmitRequest): { version: number; payload: unknown; timeoutMs: number; dedupeKey: string | null } {
    const op = 'tasks.submit';
    const definition = this.registry.definition(request.taskType);
    const version = request.handlerVersion ?? definition.currentVersion;
    this.registry.modulePath(request.taskType, version); // unknown versions fail closed
    // Version 0 describes tasks written before handler versions existed; nothing new is legacy.
    if (version === 0)
      throw new InvalidArgumentError(
        op,
        `handler version 0 of ${request.taskType} is the legacy version of pre-existing tasks; new tasks use a current version (${definition.currentVersion})`,
      );
    const parsed = definition.payload.safeParse(request.payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidArgumentError(op, `payload of ${request.taskType} is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
    }
    const timeoutMs = request.timeoutMs ?? this.limits.defaultTimeoutMs;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new InvalidArgumentError(op, `timeout must be positive and finite, got ${String(timeoutMs)}`);
    // Stored in whole milliseconds: a positive value that rounds to 0 would mean "no time at all".
    if (Math.round(timeoutMs) < 1) throw new InvalidArgumentError(op, `timeout ${timeoutMs} ms rounds to 0 ms; the smallest timeout is 1 ms`);
    if (timeoutMs > this.limits.maxTimeoutMs) {
      throw new InvalidArgumentError(
        op,
        `timeout ${timeoutMs} ms exceeds the worker maximum ${this.limits.maxTimeoutMs} ms (a task may lower it, never raise it)`,
      );
    }
    // A type that derives its dedupe key from the domain (one active task per dataset, per file)
    // owns it: a caller may repeat that key, never replace it.
    const domainKey = definition.dedupeKey?.(parsed.data) ?? null;
    if (domainKey !== null && request.dedupeKey !== undefined && request.dedupeKey !== null && request.dedupeKey !== domainKey) {
      throw new InvalidArgumentError(op, `task type ${request.taskType} derives its dedupe key (${domainKey}) from the payload; a different key is refused`);
    }
    const dedupeKey = domainKey ?? request.dedupeKey ?? null;
    return { version, payload: parsed.data, timeoutMs, dedupeKey };
  }

  async submit(request: SubmitRequest, tx?: TxHandle): Promise<SubmitResult> {
    const v = this.validate(request);
    const input = { taskType: request.taskType, handlerVersion: v.version, payload: v.payload, dedupeKey: v.dedupeKey, timeoutMs: v.timeoutMs };
    return this.write(this.registry.definition(request.taskType), input, tx);
  }

  /**
   * Batched intake (issue 12 item 4): up to 1000 submissions in one call (pc_task_submit_batch),
   * each validated as submit validates it (nothing is written when one is refused), with the
   * same results as the single submits in order. The intent hooks of the created tasks run in
   * the same transaction, in input order, after the rows are written; one wake-up after commit.
   */
  async submitBatch(requests: readonly SubmitRequest[], tx?: TxHandle): Promise<SubmitResult[]> {
    const inputs: SubmitInput[] = [];
    const definitions: TaskTypeDefinition[] = [];
    for (const request of requests) {
      const v = this.validate(request);
      inputs.push({ taskType: request.taskType, handlerVersion: v.version, payload: v.payload, dedupeKey: v.dedupeKey, timeoutMs: v.timeoutMs });
      definitions.push(this.registry.definition(request.taskType));
    }
    const inTx = async (t: TxHandle) => {
      const results = await this.tasks.submitBatch(inputs, t);
      for (let i = 0; i < results.length; i++) {
        const intent = definitions[i].intent;
        if (results[i].outcome === 'created' && intent) {
          await intent(
            t,
            { taskId: results[i].taskId, payload: inputs[i].payload, resumedFromTaskId: null },
            { query: txQuery, backend: this.tasks.store.backend },
          );
        }
      }
      return results;
    };
    if (tx) {
      const results = await inTx(tx);
      this.submittedIn.add(tx as object);
      return results;
    }
    const results = definitions.some((d) => d.intent) ? await this.tasks.transaction(inTx) : await this.tasks.submitBatch(inputs);
    this.notifySubmitted(results[0]?.taskId);
    return results;
  }

  /** The task row and the type's domain rows, in the caller's transaction or in one of their own. */
  private async write(definition: TaskTypeDefinition, input: SubmitInput, tx?: TxHandle): Promise<SubmitResult> {
    const inTx = async (t: TxHandle) => {
      const result = await this.tasks.submit(input, t);
      if (result.outcome === 'created' && definition.intent) {
        await definition.intent(
          t,
          { taskId: result.taskId, payload: input.payload, resumedFromTaskId: input.resumedFromTaskId ?? null },
          { query: txQuery, backend: this.tasks.store.backend },
        );
      }
      return result;
    };
    if (tx) {
      const result = await inTx(tx);
      this.submittedIn.add(tx as object);
      return result;
    }
    const result = definition.intent ? await this.tasks.transaction(inTx) : await this.tasks.submit(input);
    this.notifySubmitted(result.taskId);
    return result;
  }

  /**
   * A transaction of the task store in which domain rows and submissions commit together; the
   * in-process runner is woken after the commit (never before: the claim could not see the row).
   */
  async transaction<T>(fn: (tx: TxHandle) => Promise<T> | T): Promise<T> {
    let handle: TxHandle | null = null;
    const value = await this.tasks.transaction((tx) => {
      handle = tx;
      this.submittedIn.delete(tx as object);
      return fn(tx);
    });
    if (handle && this.submittedIn.has(handle as object)) {
      this.submittedIn.delete(handle as object);
      this.notifySubmitted();
    }
    return value;
  }

  /**
   * Cancel (ADR T7): a pending task ends at once, a running one records the intent. A pending
   * task whose type wrote domain rows with its intent then has its failure hook converge them,
   * in a second transaction: the hook only touches rows still owned by this task, which is
   * terminal now, so running it after the cancel committed is safe and idempotent.
   */
  async cancel(taskId: number): Promise<Awaited<ReturnType<TaskStore['cancel']>>> {
    const result = await this.tasks.cancel(taskId);
    if (result.outcome !== 'cancelled') return result;
    const task = await this.tasks.read(taskId);
    if (!task) return result;
    let intent = false;
    try {
      intent = Boolean(this.registry.definition(task.taskType).intent);
    } catch {
      /* a type this registry does not know wrote no rows here */
    }
    if (!intent) return result;
    try {
      const handler = await this.registry.load(task.taskType, task.handlerVersion);
      if (handler.failureHook) {
        const identity = {
          taskId,
          taskType: task.taskType,
          handlerVersion: task.handlerVersion,
          attemptToken: '',
          attemptCount: task.attemptCount,
          payload: task.payload,
          resumedFromTaskId: task.resumedFromTaskId,
        };
        const backend = this.tasks.store.backend;
        // Bounded like convergence.ts: a hook past failureHookTimeoutMs is rolled back, which
        // releases the write lock (SQLite) or the row locks, instead of holding them unbounded.
        await boundedTransaction(this.tasks.store, this.limits.failureHookTimeoutMs ?? DEFAULT_FAILURE_HOOK_TIMEOUT_MS, (_tx, guarded) =>
          withScopedTx(guarded, backend, (scoped) => handler.failureHook!(scoped, identity, { query: txQuery, backend })),
        );
      }
    } catch (error) {
      throw new Error(`task ${taskId} is cancelled, but its failure hook could not converge its domain rows: ${(error as Error).message}`, { cause: error });
    }
    return result;
  }

  /** Explicit resume of a failed resumable task: a new task continuing from domain progress. */
  async resume(taskId: number): Promise<SubmitResult> {
    const op = 'tasks.resume';
    const task = await this.tasks.read(taskId);
    if (!task) throw new InvalidArgumentError(op, `task ${taskId} does not exist`);
    const definition = this.registry.definition(task.taskType);
    if (!definition.resumable) throw new InvalidArgumentError(op, `task type ${task.taskType} does not declare explicit resume`);
    if (task.state !== 'failed') throw new InvalidArgumentError(op, `only a failed task can be resumed (task ${taskId} is ${task.state})`);
    // The stored payload runs under the current handler version: it must satisfy today's schema.
    const parsed = definition.payload.safeParse(task.payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidArgumentError(
        op,
        `the payload of task ${taskId} is not valid for the current ${task.taskType} handler at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
      );
    }
    return this.write(definition, {
      taskType: task.taskType,
      handlerVersion: definition.currentVersion,
      payload: parsed.data,
      dedupeKey: task.dedupeKey,
      timeoutMs: Math.min(task.timeoutMs, this.limits.maxTimeoutMs),
      resumedFromTaskId: task.taskId,
    });
  }
}
