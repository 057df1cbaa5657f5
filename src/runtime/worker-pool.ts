/**
 * Worker host (parent side) for one family: managed child processes, each running one scope
 * invocation at a time, reused for later invocations of the same family. A timeout covers the
 * whole invocation from dispatch: SIGTERM, a bounded wait, then SIGKILL; the invocation settles
 * (and the caller releases the budget) only once the exit is confirmed.
 *
 * A process being terminated (timeout, lost term, shutdown) is never reused: a result it still
 * sends (a processor that honours ctx.signal replies `failed`) is kept and the invocation settles
 * on the confirmed exit, as `timeout` when the timeout started the termination. The grace period
 * reaches the child (APSUP_WORKER_TERMINATE_GRACE_MS), which leaves once its invocation reported.
 */
import type { ChildProcess } from 'node:child_process';
import { childBaseEnv, childDatabaseOf, childEnvOf, type ChildDatabase } from './child-database.ts';
import { forkManagedChild, terminateChild, type ManagedChild } from '../child/managed-child.ts';
import { needsTsLoader, PRELOAD_TS_VARIABLE, USER_MODULES_VARIABLE } from '../child/ts-loader.ts';
import { compileUserModules } from '../child/user-modules.ts';
import type { BackgroundPrincipal, ExecutionContext } from '../sdk/processor.ts';
import type { IntentSnapshot } from '../store/types.ts';
import { WORKER_GRACE_VARIABLE, type ChildMessage, type ResultMessage } from '../worker/protocol.ts';
import { exitOutcome, reportOf, type WorkerOutcome } from './worker-outcome.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Logger } from '../logging.ts';
import { traceCarrier } from '../observability/tracing.ts';

export interface WorkerPoolOptions {
  family: string;
  processorModule: string;
  processorExport?: string;
  /** ctx.principal of every invocation (config/trusted-principal.ts): data sent with each one. */
  principal: BackgroundPrincipal;
  /** The processor account's URL, or the pool's database part (child-database.ts). */
  databaseUrl: string | ChildDatabase;
  timeoutMs: number;
  graceMs: number;
  maxIdle: number;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** Invocation timeouts and durations (default: the system clock). */
  clock?: Clock;
}

interface WorkerProcess {
  handle: ManagedChild;
  child: ChildProcess;
  /** performance.now() when the process reported ready; null while it starts up. */
  readyAt: number | null;
  ready: Promise<void>;
  exited: Promise<void>;
  alive: boolean;
  /** Set once termination began (resolves on the confirmed exit); such a process is never reused. */
  terminating: Promise<void> | null;
}

let invocationCounter = 0;

export class WorkerPool {
  private readonly idle: WorkerProcess[] = [];
  private readonly all = new Set<WorkerProcess>();
  terminating = 0;
  spawned = 0;
  private closed = false;

  private readonly clock: Clock;

  private readonly database: ChildDatabase;

  constructor(private readonly options: WorkerPoolOptions) {
    this.clock = options.clock ?? systemClock;
    this.database = childDatabaseOf(options.databaseUrl);
  }

  /** Manifest of the processor module compiled for the processes (user-modules.ts), if any. */
  private userModules: string | null = null;

  /** Compiles the processor module and its imports before processes start (they then need no tsx). */
  async prepare(): Promise<void> {
    const r = await compileUserModules([this.options.processorModule]);
    this.userModules = 'manifest' in r ? r.manifest : null;
    if ('reason' in r && needsTsLoader(this.options.processorModule)) {
      this.options.logger.info({ family: this.options.family, reason: r.reason }, 'worker processes load their TypeScript modules through tsx');
    }
  }

  private spawn(): WorkerProcess {
    const handle = forkManagedChild('worker-main', {
      ...childBaseEnv(process.env),
      ...this.options.env,
      ...childEnvOf(this.database),
      [WORKER_GRACE_VARIABLE]: String(this.options.graceMs),
      [PRELOAD_TS_VARIABLE]: needsTsLoader(this.options.processorModule) && !this.userModules ? '1' : '0',
      [USER_MODULES_VARIABLE]: this.userModules ?? '',
    });
    const { child } = handle;
    this.database.watchdog?.watch(child);
    this.spawned += 1;
    const worker: WorkerProcess = { handle, child, alive: true, readyAt: null, ready: Promise.resolve(), exited: Promise.resolve(), terminating: null };
    worker.exited = new Promise<void>((resolve) => {
      child.once('exit', () => {
        worker.alive = false;
        this.all.delete(worker);
        const i = this.idle.indexOf(worker);
        if (i >= 0) this.idle.splice(i, 1);
        resolve();
      });
    });
    const spawnedAt = performance.now(); // real time: the start-up figure logged is the process's own, whatever the pool's clock
    this.options.logger.debug({ family: this.options.family, pid: child.pid }, 'worker process spawned');
    worker.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: ChildMessage) => {
        if (m.type === 'ready') {
          child.off('message', onMessage);
          worker.readyAt = performance.now();
          this.options.logger.debug({ family: this.options.family, pid: child.pid, startupMs: Math.round(worker.readyAt - spawnedAt) }, 'worker process ready');
          resolve();
        }
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`worker exited during start-up (code ${code})`)));
    });
    worker.ready.catch(() => undefined);
    this.all.add(worker);
    return worker;
  }

  /** From now on each invocation carries its acknowledgement token (Runtime.start). */
  useInvocationSecret(secret: string): void {
    this.database.tokens.use(secret);
  }

  /** Runs one invocation; resolves after the result, or after a confirmed exit on timeout/crash. */
  async run(scopeId: string, context: ExecutionContext, snapshot?: IntentSnapshot): Promise<WorkerOutcome> {
    if (this.closed) throw new Error('worker pool is closed');
    const worker = this.takeIdle() ?? this.spawn();
    const started = this.clock.monotonic();
    const invocationId = ++invocationCounter;
    const pid = worker.child.pid ?? -1;
    return new Promise<WorkerOutcome>((resolve) => {
      let settled = false;
      let timedOut = false;
      /** A result that arrived while the process was being terminated: settled on the exit. */
      let late: ResultMessage | null = null;
      const finish = (outcome: WorkerOutcome, reusable: boolean) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        worker.child.off('message', onMessage);
        worker.child.off('exit', onExit);
        const healthy = reusable && worker.alive && worker.terminating === null;
        if (healthy && !this.closed && this.idle.length < this.options.maxIdle) this.idle.push(worker);
        else if (healthy) this.retire(worker);
        resolve(outcome);
      };
      const onMessage = (m: ChildMessage) => {
        if (m.type !== 'result' || m.invocationId !== invocationId) return;
        if (timedOut || worker.terminating !== null) {
          // The process is being terminated: its budget slot is held until the exit is confirmed.
          late = m;
          return;
        }
        finish({ ...reportOf(m), durationMs: m.durationMs, pid }, true);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        const durationMs = this.clock.monotonic() - started;
        const facts = { durationMs, pid, exitCode: code, signal, timedOut, timeoutMs: this.options.timeoutMs, startingUp: worker.readyAt === null, late };
        finish(exitOutcome(facts), false);
      };
      const timer = this.clock.setTimeout(
        () => {
          timedOut = true;
          void this.terminate(worker);
        },
        this.options.timeoutMs,
        { ref: true },
      );
      worker.child.on('message', onMessage);
      worker.child.on('exit', onExit);
      if (!worker.alive) {
        onExit(worker.child.exitCode, worker.child.signalCode);
        return;
      }
      const carrier = traceCarrier();
      worker.ready.then(
        () => {
          if (settled || !worker.alive) return;
          worker.child.send({
            type: 'invoke',
            invocationId,
            scopeId,
            processorModule: this.options.processorModule,
            processorExport: this.options.processorExport,
            context,
            principal: this.options.principal,
            ...(snapshot ? { snapshot } : {}),
            ...this.database.tokens.of(context, scopeId),
            ...carrier, // the dispatch span: the worker's invocation span is its child
          });
        },
        () => undefined,
      );
    });
  }

  /** An idle process that is alive and not being terminated, if any. */
  private takeIdle(): WorkerProcess | undefined {
    for (;;) {
      const worker = this.idle.pop();
      if (!worker || (worker.alive && worker.terminating === null)) return worker;
    }
  }

  /**
   * Graceful termination, a bounded wait, then a forced kill; resolves when the exit is
   * confirmed. Idempotent: a second call waits for the termination already under way.
   */
  terminate(worker: WorkerProcess): Promise<void> {
    if (!worker.alive) return Promise.resolve();
    if (worker.terminating) return worker.terminating;
    const i = this.idle.indexOf(worker);
    if (i >= 0) this.idle.splice(i, 1);
    this.terminating += 1;
    worker.terminating = (async () => {
      try {
        await terminateChild(worker.handle, this.options.graceMs, {
          clock: this.clock,
          beforeKill: () => {
            this.options.logger.warn(
              { family: this.options.family, workerPid: worker.child.pid, graceMs: this.options.graceMs },
              'worker did not exit within the grace period; killing it',
            );
          },
        });
        await worker.exited;
      } finally {
        this.terminating -= 1;
      }
    })();
    return worker.terminating;
  }

  private retire(worker: WorkerProcess): void {
    if (worker.child.connected) worker.child.send({ type: 'shutdown' });
    else worker.child.kill('SIGTERM');
  }

  /**
   * Starts worker processes ahead of need until `count` are idle (or starting), never beyond
   * maxIdle processes in all; an invocation takes a starting one and waits for it to be ready.
   */
  prewarm(count: number): number {
    let started = 0;
    const target = Math.min(count, this.options.maxIdle);
    while (!this.closed && this.idle.length < target && this.all.size < this.options.maxIdle) {
      this.idle.push(this.spawn());
      started += 1;
    }
    return started;
  }

  /** Terminates the processes that are running an invocation (idle ones stay). */
  async terminateBusy(): Promise<void> {
    const busy = [...this.all].filter((w) => !this.idle.includes(w));
    await Promise.all(busy.map((w) => this.terminate(w)));
  }

  /** Terminates every worker (running ones included) within the grace period; resolves when all exited. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.all].map((w) => this.terminate(w)));
  }

  get processCount(): number {
    return this.all.size;
  }
}
