/**
 * Durable task runner (host side). Claims pending tasks up to the capacity cap (the database
 * enforces it across processes), runs each attempt in a managed child process, enforces the
 * timeout (graceful termination, bounded wait, forced kill), and converges attempts that end
 * without a terminal write (crash, timeout, shutdown) with the failure hook in the terminal
 * transaction. Work is picked up at start-up, whenever a task finishes (relay), on in-process
 * submissions and, as the last resort, by a bounded periodic sweep that also reconciles lost
 * attempts (expired leases). A readiness fact with a short TTL is published while it runs.
 */
import { fork, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../logging.ts';
import { SRC_DIR } from '../paths.ts';
import { AttemptLostError } from '../store/errors.ts';
import { txQuery } from '../store/tx-query.ts';
import type { TaskConfig } from './config.ts';
import type { TaskIdentity } from './handler.ts';
import { UnknownHandlerError, type TaskRegistry } from './registry.ts';
import type { ClaimedTask, TaskStore } from './task-store.ts';
import type { RunTaskMessage, TaskResultMessage } from './task-worker-main.ts';

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

interface RunningAttempt { task: ClaimedTask; child: ChildProcess; exited: Promise<void>; timedOut: boolean; reported: TaskResultMessage | null }

export class TaskRunner {
  readonly workerId: string;
  private readonly running = new Map<number, RunningAttempt>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private readinessTimer: NodeJS.Timeout | null = null;
  private filling: Promise<void> | null = null;
  private refill = false;
  private stopped = true;
  completed = 0;
  sweeps = 0;

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
    await this.sweep(); // start-up: reconcile lost attempts and pick up pending work
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
    while (!this.stopped && this.running.size < this.config.capacity) {
      const task = await this.tasks.claim(this.workerId, this.config.leaseMs, this.config.capacity);
      if (!task) return;
      this.start_(task);
    }
  }

  async sweep(): Promise<void> {
    if (this.stopped) return;
    this.sweeps += 1;
    try {
      for (const lost of await this.tasks.listLost(100)) {
        if (this.running.has(lost.taskId)) continue;
        await this.converge(lost, 'lost', 'the attempt stopped heartbeating and its lease expired', { expired: true });
      }
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'lost-task reconciliation failed');
    }
    this.notify();
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
    const attempt: RunningAttempt = { task, child, timedOut: false, reported: null, exited: Promise.resolve() };
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
        const message: RunTaskMessage = { type: 'run-task', task, tasksModule: this.config.tasksModule, leaseMs: this.config.leaseMs, progressMinStep: this.config.progressMinStep };
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
      void this.terminate(attempt);
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

  private async terminate(attempt: RunningAttempt): Promise<void> {
    if (attempt.child.exitCode !== null || attempt.child.signalCode !== null) return;
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
    if (reported && !attempt.timedOut && reported.status === 'attempt_lost') {
      // The child lost the attempt (lease expired or another owner): converge it now, as the
      // reconciler would (re-checked by token and expired lease), instead of waiting for a sweep.
      await this.converge(ref, 'lost', 'the attempt stopped heartbeating and its lease expired', { expired: true });
      return;
    }
    if (reported && !attempt.timedOut && reported.errorCode !== 'worker_error') {
      this.completed += 1;
      this.logger.info({ taskId: task.taskId, taskType: task.taskType, status: reported.status, errorCode: reported.errorCode }, 'task attempt ended');
      return;
    }
    const reason = attempt.timedOut ? 'timeout' : reported ? 'worker_error' : this.stopped ? 'interrupted_by_shutdown' : 'worker_exited';
    const message = attempt.timedOut
      ? `the task exceeded its timeout of ${Math.min(task.timeoutMs, this.config.maxTimeoutMs)} ms`
      : reported?.errorMessage ?? 'the worker process ended without a terminal write';
    await this.converge(ref, reason, message, { expired: false, payload: task.payload, attemptCount: task.attemptCount });
  }

  /**
   * Ends an attempt that cannot write its own terminal state: the failure hook and the terminal
   * write commit in one transaction fenced by the attempt token (and, for lost attempts, by an
   * expired lease). A requeue replaces the failure only for handlers with idempotent, fenced side effects.
   */
  private async converge(
    t: { taskId: number; taskType: string; handlerVersion: number; attemptToken: string },
    code: string,
    message: string,
    opts: { expired: boolean; payload?: unknown; attemptCount?: number },
  ): Promise<void> {
    let requeue = false;
    try {
      requeue = opts.expired && Boolean(this.registry.definition(t.taskType).idempotentSideEffects);
    } catch { /* unknown type: fail */ }
    let hook: ((tx: import('../store/types.ts').TxHandle, task: TaskIdentity) => Promise<void>) | null = null;
    try {
      const handler = await this.registry.load(t.taskType, t.handlerVersion);
      if (handler.failureHook) hook = (tx, task) => handler.failureHook!(tx, task, { query: txQuery, backend: this.tasks.store.backend });
    } catch { /* unknown version: no hook, fail closed */ }
    try {
      const outcome = await this.tasks.transaction(async (tx) => {
        const detail = await this.tasks.read(t.taskId, tx);
        const identity: TaskIdentity = { ...t, attemptCount: detail?.attemptCount ?? opts.attemptCount ?? 0, payload: detail?.payload ?? opts.payload };
        if (opts.expired) {
          const r = await this.tasks.expireLost(t.taskId, t.attemptToken, requeue, tx);
          if (r === 'failed' && hook) await hook(tx, identity);
          return r;
        }
        await this.tasks.assertAttempt(tx, t.taskId, t.attemptToken);
        if (hook) await hook(tx, identity);
        await this.tasks.fail(t.taskId, t.attemptToken, code, message, tx);
        return 'failed';
      });
      this.logger.warn({ taskId: t.taskId, taskType: t.taskType, errorCode: code, outcome }, 'task attempt converged');
    } catch (error) {
      if (error instanceof AttemptLostError) return; // the attempt already ended (or another owner took over)
      this.logger.error({ taskId: t.taskId, err: (error as Error).message }, 'task convergence failed; the sweep will retry');
    }
  }

  get runningCount(): number {
    return this.running.size;
  }

  /** Stops claiming, terminates running attempts within the grace period and converges them. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.readinessTimer) clearInterval(this.readinessTimer);
    await this.filling?.catch(() => undefined);
    const attempts = [...this.running.values()];
    await Promise.all(attempts.map((a) => this.terminate(a)));
    // settle() of each attempt runs on exit; wait until they are all gone.
    const deadline = Date.now() + this.config.terminateGraceMs + 5000;
    while (this.running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }
}
