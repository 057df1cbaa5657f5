/**
 * Durable task runner (host side). Claims pending tasks up to the capacity cap (the database
 * enforces it across processes), runs each attempt in a managed child process, enforces the
 * timeout (graceful termination, bounded wait, forced kill), and converges attempts that end
 * without a terminal write (crash, timeout, shutdown, expired lease) with the failure hook in the
 * terminal transaction; types with idempotent, fenced side effects are requeued instead on any
 * loss that is not a verdict (not on a timeout), up to MAX_ATTEMPTS.
 *
 * Wake-ups: a submission becomes runnable at commit. In-process submissions notify after their
 * commit (TaskService). Other processes' commits: on SQLite the foreign-commit file watch
 * (src/runtime/sqlite-wakeup.ts, no SQL while nothing is written) followed by one index probe;
 * on MySQL/OceanBase an index probe every WAKEUP_POLL_MS while capacity is free. Losing a
 * wake-up only delays the task: work is also picked up at start-up, whenever a task finishes
 * (relay), and by a bounded periodic sweep (the last resort) that also reconciles lost attempts,
 * including this runner's own hung children. A readiness fact with a short TTL is published
 * while it runs and withdrawn on stop.
 */
import { fork, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../logging.ts';
import { SRC_DIR } from '../paths.ts';
import { watchSqliteCommits } from '../runtime/sqlite-wakeup.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { AttemptLostError } from '../store/errors.ts';
import { txQuery } from '../store/tx-query.ts';
import type { TaskConfig } from './config.ts';
import type { TaskIdentity } from './handler.ts';
import { UnknownHandlerError, type TaskRegistry } from './registry.ts';
import type { ClaimedTask, LostOutcome, TaskStore } from './task-store.ts';
import type { RunTaskMessage, TaskResultMessage, TerminateMessage } from './task-worker-main.ts';

const TASK_WORKER_MAIN = path.join(SRC_DIR, 'tasks', 'task-worker-main.ts');
const TSX_LOADER = import.meta.resolve('tsx');

export function newTaskWorkerId(): string {
  const host = os.hostname().replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 50) || 'host';
  return `tasks:${host}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
}

/** Node timers overflow above 2^31 - 1 ms (about 24.8 days) and would fire at once: chain them. */
const MAX_TIMER_MS = 2_147_483_647;

export function setLongTimeout(fn: () => void, ms: number): { clear(): void } {
  let timer: NodeJS.Timeout;
  let remaining = Math.max(0, ms);
  const arm = () => {
    const step = Math.min(remaining, MAX_TIMER_MS);
    remaining -= step;
    timer = setTimeout(() => (remaining > 0 ? arm() : fn()), step);
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}

interface RunningAttempt {
  task: ClaimedTask;
  child: ChildProcess;
  exited: Promise<void>;
  timedOut: boolean;
  /** The sweep found this attempt's lease expired (a hung child): terminated, converged as lost. */
  leaseLost: boolean;
  reported: TaskResultMessage | null;
}

export type WakeupSource = 'submit' | 'commit' | 'probe';

export class TaskRunner {
  readonly workerId: string;
  private readonly running = new Map<number, RunningAttempt>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private readinessTimer: NodeJS.Timeout | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private probing = false;
  private reprobe = false;
  private unwatch: (() => void) | null = null;
  private filling: Promise<void> | null = null;
  private refill = false;
  private stopped = true;
  /** Failed convergences per attempt (taskId:token): bounded by FAILURE_HOOK_MAX_ATTEMPTS. */
  private readonly hookFailures = new Map<string, number>();
  completed = 0;
  sweeps = 0;
  /** Wake-ups delivered / dropped by wakeupFault (tests inject lost wake-ups here). */
  wakeups = 0;
  wakeupsDropped = 0;
  /** Test hook: return true to lose a wake-up (the real delivery path, every source). */
  wakeupFault: ((source: WakeupSource) => boolean) | null = null;

  constructor(
    private readonly tasks: TaskStore,
    private readonly registry: TaskRegistry,
    private readonly config: TaskConfig,
    private readonly databaseUrl: string,
    private readonly logger: Logger,
    options: { workerId?: string } = {},
  ) {
    this.workerId = options.workerId ?? newTaskWorkerId();
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.publishReadiness();
    this.readinessTimer = setInterval(() => { void this.publishReadiness(); }, Math.max(500, Math.floor(this.config.readinessTtlMs / 3)));
    this.readinessTimer.unref?.();
    this.sweepTimer = setInterval(() => { void this.sweep(); }, this.config.sweepMs);
    this.sweepTimer.unref?.();
    const store = this.tasks.store;
    if (store instanceof SqliteStore) {
      // Commits of other processes (submitters, worker children) touch the database files; no SQL
      // runs until one does, then one index probe decides whether to claim.
      const db = store.db;
      if (db.name && db.name !== ':memory:') this.unwatch = watchSqliteCommits(db, db.name, () => this.probe('commit'));
    } else {
      this.pollTimer = setInterval(() => this.probe('probe'), this.config.wakeupPollMs);
      this.pollTimer.unref?.();
    }
    await this.sweep(); // start-up: reconcile lost attempts and pick up pending work
  }

  /** Lets in-process submissions wake this runner after they commit. */
  attach(service: { onSubmitted: (() => void) | null }): void {
    service.onSubmitted = () => this.wake('submit');
  }

  /** The wake-up path: a hint that pending work may exist (losing one only delays the task). */
  wake(source: WakeupSource): void {
    if (this.stopped) return;
    if (this.wakeupFault?.(source)) {
      this.wakeupsDropped += 1;
      return;
    }
    this.wakeups += 1;
    this.notify();
  }

  /** Only with free capacity and nothing being claimed: one index lookup for pending work. */
  private probe(source: WakeupSource): void {
    // A full runner needs no probe: the relay claims when one of its attempts finishes.
    if (this.stopped || this.filling || this.running.size >= this.config.capacity) return;
    if (this.probing) {
      this.reprobe = true; // a commit during the probe may not be in its snapshot
      return;
    }
    this.probing = true;
    this.tasks.hasPending(this.registry.types_()).then(
      (pending) => { if (pending) this.wake(source); },
      (error: unknown) => this.logger.warn({ err: (error as Error).message }, 'task wake-up probe failed; the sweep will retry'),
    ).finally(() => {
      this.probing = false;
      if (this.reprobe) {
        this.reprobe = false;
        this.probe(source);
      }
    });
  }

  private async publishReadiness(): Promise<void> {
    try {
      await this.tasks.publishReadiness(this.workerId, this.config.readinessTtlMs);
    } catch (error) {
      this.logger.warn({ workerId: this.workerId, err: (error as Error).message }, 'task readiness publication failed');
    }
  }

  /** A wake-up: claim what capacity allows. Several wake-ups merge. */
  notify(): void {
    if (this.stopped) return;
    if (this.filling) {
      this.refill = true;
      return;
    }
    this.filling = this.fill().catch((error: unknown) => {
      this.logger.warn({ err: (error as Error).message }, 'task claim failed; the sweep will retry');
    }).finally(() => {
      this.filling = null;
      if (this.refill) {
        this.refill = false;
        this.notify();
      }
    });
  }

  private async fill(): Promise<void> {
    // config.capacity bounds this process; the claim enforces the database cap across processes (ADR T6).
    while (!this.stopped && this.running.size < this.config.capacity) {
      const task = await this.tasks.claim(this.workerId, this.config.leaseMs, this.registry.types_());
      if (!task) return;
      this.start_(task);
    }
  }

  async sweep(): Promise<void> {
    if (this.stopped) return;
    this.sweeps += 1;
    try {
      for (const lost of await this.tasks.listLost(100, this.registry.types_())) {
        const mine = this.running.get(lost.taskId);
        if (mine) {
          // This runner's own child stopped heartbeating (a blocked event loop, a hang): its
          // attempt is lost. Terminate it; settle() converges it as lost once it exited.
          if (mine.task.attemptToken === lost.attemptToken && !mine.leaseLost) {
            mine.leaseLost = true;
            this.logger.warn({ taskId: lost.taskId, taskType: lost.taskType, pid: mine.child.pid }, 'task worker stopped heartbeating and its lease expired; terminating it');
            void this.terminate(mine, 'lost');
          }
          continue;
        }
        await this.converge(lost, 'lost', 'the attempt stopped heartbeating and its lease expired', { expired: true });
      }
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'lost-task reconciliation failed');
    }
    // The last resort for lost wake-ups; with free capacity only (a full runner is relayed).
    if (this.running.size < this.config.capacity) {
      try {
        if (await this.tasks.hasPending(this.registry.types_())) this.notify();
      } catch (error) {
        this.logger.warn({ err: (error as Error).message }, 'task sweep probe failed');
      }
    }
  }

  private start_(task: ClaimedTask): void {
    // Fail closed before spawning anything when the handler version is unknown.
    try {
      this.registry.modulePath(task.taskType, task.handlerVersion);
    } catch (error) {
      const code = error instanceof UnknownHandlerError ? error.code : 'handler_unavailable';
      void this.tasks.transaction((tx) => this.tasks.fail(task.taskId, task.attemptToken, code, (error as Error).message, tx))
        .then(() => this.logger.warn({ taskId: task.taskId, taskType: task.taskType, handlerVersion: task.handlerVersion, errorCode: code }, 'task failed closed'))
        .catch((e: unknown) => this.logger.warn({ taskId: task.taskId, err: (e as Error).message }, 'failing an unknown task failed'))
        .finally(() => this.notify());
      return;
    }
    const child = fork(TASK_WORKER_MAIN, [], {
      execArgv: ['--import', TSX_LOADER],
      env: { ...process.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: this.databaseUrl },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
    });
    const attempt: RunningAttempt = { task, child, timedOut: false, leaseLost: false, reported: null, exited: Promise.resolve() };
    attempt.exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.running.set(task.taskId, attempt);
    // The lease started at the claim; the child's start-up (loader, imports; seconds on a busy
    // host) must not eat it. Until the child has the attempt, this runner keeps the lease alive;
    // an attempt lost meanwhile is never handed over.
    let handedOver = false;
    const lost = (error: unknown) => {
      if (attempt.reported) return;
      this.logger.warn({ taskId: task.taskId, err: (error as Error).message }, 'task attempt lost before its worker started');
      attempt.reported = { type: 'task-result', taskId: task.taskId, status: 'attempt_lost', errorCode: 'attempt_lost', errorMessage: (error as Error).message };
      child.kill('SIGKILL');
    };
    const keepLease = async (): Promise<boolean> => {
      try {
        await this.tasks.heartbeat(task.taskId, task.attemptToken, this.config.leaseMs);
      } catch (error) {
        if (error instanceof AttemptLostError) {
          lost(error);
          return false;
        }
        this.logger.warn({ taskId: task.taskId, err: (error as Error).message }, 'task lease renewal during worker start-up failed');
      }
      return true;
    };
    const keeper = setInterval(() => { if (!handedOver) void keepLease(); }, Math.max(200, Math.floor(this.config.leaseMs / 3)));
    child.on('message', (m: TaskResultMessage | { type: 'ready' }) => {
      if (m.type === 'ready') {
        const message: RunTaskMessage = {
          type: 'run-task', task, tasksModule: this.config.tasksModule, leaseMs: this.config.leaseMs,
          progressMinStep: this.config.progressMinStep, terminateGraceMs: this.config.terminateGraceMs,
        };
        void keepLease().then((ok) => {
          if (!ok || handedOver || !child.connected) return;
          handedOver = true;
          clearInterval(keeper);
          child.send(message); // from here on the child heartbeats (at once, then every lease / 3)
        });
      } else if (m.type === 'task-result') {
        attempt.reported = m;
      }
    });
    const timeoutMs = Math.min(task.timeoutMs, this.config.maxTimeoutMs);
    const timer = setLongTimeout(() => {
      attempt.timedOut = true;
      void this.terminate(attempt, 'timeout');
    }, timeoutMs);
    this.logger.info({ taskId: task.taskId, taskType: task.taskType, attempt: task.attemptCount, workerId: this.workerId }, 'task attempt started');
    void attempt.exited.then(async () => {
      clearInterval(keeper);
      timer.clear();
      await this.settle(attempt);
      this.running.delete(task.taskId);
      this.notify(); // relay: a finished task hands its capacity to the next pending one
    });
  }

  /**
   * SIGTERM, bounded wait, SIGKILL. The reason goes first over IPC: after a timeout or a lost
   * lease a handler that returns in the grace period must not record a success; after a shutdown
   * it may (it finished its work).
   */
  private async terminate(attempt: RunningAttempt, reason: TerminateMessage['reason']): Promise<void> {
    if (attempt.child.exitCode !== null || attempt.child.signalCode !== null) return;
    if (attempt.child.connected) {
      const message: TerminateMessage = { type: 'terminate', reason };
      await new Promise<void>((resolve) => attempt.child.send(message, () => resolve()));
    }
    attempt.child.kill('SIGTERM');
    const graceful = await Promise.race([
      attempt.exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), this.config.terminateGraceMs).unref()),
    ]);
    if (!graceful) {
      attempt.child.kill('SIGKILL');
      await attempt.exited;
    }
  }

  private async settle(attempt: RunningAttempt): Promise<void> {
    const { task, reported } = attempt;
    const ref = { taskId: task.taskId, taskType: task.taskType, handlerVersion: task.handlerVersion, attemptToken: task.attemptToken };
    const lostMessage = 'the attempt stopped heartbeating and its lease expired';
    if (!attempt.timedOut && (attempt.leaseLost || reported?.status === 'attempt_lost')) {
      // The attempt lost its lease (the child said so, or the sweep found it hung): converge it
      // now, as the reconciler would (re-checked by token and expired lease). A child may also
      // report a lost attempt while the lease is still live (a domain row fenced by the attempt
      // was taken over): then the attempt is ended as it stands, fenced by its token.
      await this.converge(ref, 'lost', lostMessage, {
        expired: true,
        live: attempt.leaseLost ? undefined : { code: 'attempt_lost', message: reported?.errorMessage ?? 'the attempt lost ownership of its domain rows' },
      });
      return;
    }
    if (reported && !attempt.timedOut && reported.status !== 'interrupted' && reported.errorCode !== 'worker_error') {
      this.completed += 1;
      this.logger.info({ taskId: task.taskId, taskType: task.taskType, status: reported.status, errorCode: reported.errorCode }, 'task attempt ended');
      return;
    }
    // No terminal write by the child. A timeout is a verdict (never requeued); a shutdown, a crash
    // of the child or a worker error is a loss (idempotent types are requeued).
    const reason = attempt.timedOut ? 'timeout'
      : reported?.status === 'interrupted' || this.stopped ? 'interrupted_by_shutdown'
        : reported ? 'worker_error' : 'worker_exited';
    const message = attempt.timedOut
      ? `the task exceeded its timeout of ${Math.min(task.timeoutMs, this.config.maxTimeoutMs)} ms`
      : reason === 'interrupted_by_shutdown' ? 'the worker host shut down while the attempt ran'
        : reported?.errorMessage ?? 'the worker process ended without a terminal write';
    await this.converge(ref, reason, message, { expired: false, requeue: reason !== 'timeout', payload: task.payload, attemptCount: task.attemptCount });
  }

  /**
   * Ends an attempt that cannot write its own terminal state: the outcome (decided in SQL under
   * the row lock), the failure hook and the terminal write commit in one transaction fenced by
   * the attempt token (and, for lost attempts, by an expired lease). A cancel intent ends the
   * task cancelled; a requeue (bounded by MAX_ATTEMPTS) replaces the failure only for handlers
   * with idempotent, fenced side effects. A failure hook that keeps failing is bounded: after
   * FAILURE_HOOK_MAX_ATTEMPTS failed convergences of the same attempt the task is failed without
   * it (error failure_hook_failed), so it releases its capacity slot and its dedupe key.
   */
  private async converge(
    t: { taskId: number; taskType: string; handlerVersion: number; attemptToken: string },
    code: string,
    message: string,
    opts: { expired: boolean; requeue?: boolean; payload?: unknown; attemptCount?: number; live?: { code: string; message: string } },
  ): Promise<void> {
    let requeue = false;
    try {
      requeue = (opts.requeue ?? true) && Boolean(this.registry.definition(t.taskType).idempotentSideEffects);
    } catch { /* unknown type: fail */ }
    const key = `${t.taskId}:${t.attemptToken}`;
    const failures = this.hookFailures.get(key) ?? 0;
    const giveUp = failures >= this.config.failureHookMaxAttempts;
    let hook: ((tx: import('../store/types.ts').TxHandle, task: TaskIdentity) => Promise<void>) | null = null;
    if (!giveUp) {
      try {
        const handler = await this.registry.load(t.taskType, t.handlerVersion);
        if (handler.failureHook) hook = (tx, task) => handler.failureHook!(tx, task, { query: txQuery, backend: this.tasks.store.backend });
      } catch { /* unknown version: no hook, fail closed */ }
    }
    const maxAttempts = this.config.maxAttempts;
    try {
      const outcome = await this.tasks.transaction(async (tx) => {
        let r: LostOutcome;
        if (opts.expired) {
          r = await this.tasks.expireLost(t.taskId, t.attemptToken, requeue, tx, { maxAttempts, giveUp });
          if (r === 'not_lost' && opts.live && !giveUp) {
            r = await this.tasks.endAttempt(t.taskId, t.attemptToken, { requeue, maxAttempts, errorCode: opts.live.code, errorMessage: opts.live.message }, tx);
          }
        } else if (giveUp) {
          await this.tasks.fail(t.taskId, t.attemptToken, 'failure_hook_failed', `${message}; the failure hook kept failing, the domain rows were not converged`, tx);
          r = 'gave_up';
        } else {
          r = await this.tasks.endAttempt(t.taskId, t.attemptToken, { requeue, maxAttempts, errorCode: code, errorMessage: message }, tx);
        }
        if (hook && (r === 'failed' || r === 'exhausted' || r === 'cancelled')) {
          const detail = await this.tasks.read(t.taskId, tx);
          const identity: TaskIdentity = { ...t, attemptCount: detail?.attemptCount ?? opts.attemptCount ?? 0, payload: detail?.payload ?? opts.payload };
          await hook(tx, identity);
        }
        return r;
      });
      this.hookFailures.delete(key);
      if (outcome === 'gave_up') {
        this.logger.error({ taskId: t.taskId, taskType: t.taskType, errorCode: 'failure_hook_failed', failedConvergences: failures },
          'TASK FAILED WITHOUT ITS FAILURE HOOK: the hook kept failing; its domain rows were not converged and need repair by hand');
      } else {
        this.logger.warn({ taskId: t.taskId, taskType: t.taskType, errorCode: code, outcome }, 'task attempt converged');
      }
    } catch (error) {
      if (error instanceof AttemptLostError) { // the attempt already ended (or another owner took over)
        this.hookFailures.delete(key);
        return;
      }
      this.hookFailures.set(key, failures + 1);
      this.logger.error({ taskId: t.taskId, err: (error as Error).message, failedConvergences: failures + 1, limit: this.config.failureHookMaxAttempts },
        'task convergence failed; the sweep will retry once the lease expired');
    }
  }

  get runningCount(): number {
    return this.running.size;
  }

  /**
   * Graceful shutdown: stops claiming, SIGTERMs running attempts (their ctx.signal is aborted and
   * they get TERMINATE_GRACE_SECONDS), converges those that did not finish (requeue of idempotent
   * types, else failed with interrupted_by_shutdown and the failure hook), withdraws readiness.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.readinessTimer) clearInterval(this.readinessTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.unwatch?.();
    this.unwatch = null;
    await this.filling?.catch(() => undefined);
    const attempts = [...this.running.values()];
    await Promise.all(attempts.map((a) => this.terminate(a, 'shutdown')));
    // settle() of each attempt runs on exit; wait until they are all gone.
    const deadline = Date.now() + this.config.terminateGraceMs + 5000;
    while (this.running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    try {
      await this.tasks.withdrawReadiness(this.workerId);
    } catch (error) {
      this.logger.warn({ workerId: this.workerId, err: (error as Error).message }, 'task readiness withdrawal failed; it expires with its TTL');
    }
  }
}
