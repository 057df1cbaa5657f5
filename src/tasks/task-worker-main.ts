/**
 * Task worker process: started ahead of need by the runner's pool (attempt-pool.ts), it runs one
 * claimed attempt at a time (run-attempt.ts) and may be given another after an attempt that ended
 * cleanly; the host never reuses a process whose attempt it stopped (timeout, cancel without
 * return, lost lease) or that crashed. After each attempt the process reports whether it is
 * reusable: only when the attempt left nothing running (a timer, a socket, a child process the
 * handler did not close would reach the next attempt).
 *
 * SIGTERM (graceful shutdown of the host, or a timeout) aborts ctx.signal and gives the handler
 * up to the host's TERMINATE_GRACE_SECONDS (less a margin to report) to return; an attempt that
 * does not finish in that window is reported 'interrupted' without a terminal write, and the
 * host converges it (requeue of idempotent types, or failure with its failure hook). SIGINT is
 * ignored: a terminal's Ctrl-C reaches the whole process group, and the host decides.
 */
import path from 'node:path';
import { exitWithParent } from '../child/parent-channel.ts';
import { ensureTsLoader, importUserModule, PRELOAD_TS_VARIABLE } from '../child/ts-loader.ts';
import { DATABASE_URL_VARIABLE, parseDatabaseUrl } from '../config/database-url.ts';
import { createLazyLogger } from '../logging.ts';
import type { BaseStore } from '../store/base-store.ts';
import { readerTargetOf } from '../store/session-accounts.ts';
import { reportTransactions, transactionBudgetFromEnv } from '../store/transaction-observer.ts';
import { openStoreLazily } from '../store/open-lazy.ts';
import { HandlerModules, type ModuleIsolation } from './handler-modules.ts';
import { runAttempt, type AttemptControl, type AttemptEnvironment } from './run-attempt.ts';
import {
  MODULE_ISOLATION_VARIABLE,
  PRELOAD_TASKS_MODULE_VARIABLE,
  type TaskHostMessage,
  type TaskResultMessage,
  type TaskWorkerMessage,
} from './worker-protocol.ts';

export type { RunTaskMessage, TaskOutcomeStatus, TaskResultMessage, TerminateMessage } from './worker-protocol.ts';

const logger = createLazyLogger({ name: 'apsup-task-worker' });
const control: AttemptControl = { terminating: false, terminateReason: null, abort: null };
let running: Extract<TaskHostMessage, { type: 'run-task' }> | null = null;
let env: AttemptEnvironment | null = null;
let baseline: Map<string, number> | null = null;
/** The store's own connections at the baseline (MySQL: its pool may open one more under load). */
let baselineConnections = 0;

function send(message: TaskWorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, () => resolve());
  });
}

function resources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

function storeConnections(): number {
  const store = env?.store as { openConnections?: () => number } | undefined;
  return store?.openConnections?.() ?? 0;
}

/**
 * Pauses between the looks at what the attempt left: a socket it closed is released a few turns
 * later, later still on a loaded host (about 25 ms in all was too short with six test files on two
 * cores); about a quarter of a second in all before it counts as left behind. A clean attempt
 * passes the first look; only one that leaves something running reports that much later.
 */
const RELEASE_PAUSES_MS = [5, 10, 20, 40, 80, 100];

/** Whether the attempt left a resource behind (with time for closed sockets to be released). */
async function leftNothing(): Promise<boolean> {
  for (const pause of RELEASE_PAUSES_MS) {
    await new Promise((r) => setImmediate(r));
    const now = resources();
    // Connections the store opened beyond its baseline are the process's own, not the handler's.
    const own = Math.max(0, storeConnections() - baselineConnections);
    const allowed = (k: string) => (baseline?.get(k) ?? 0) + (k === 'TCPSocketWrap' ? own : 0);
    if ([...now].every(([k, n]) => n <= allowed(k))) return true;
    await new Promise((r) => setTimeout(r, pause));
  }
  return false;
}

async function attempt(message: Extract<TaskHostMessage, { type: 'run-task' }>): Promise<void> {
  let r: TaskResultMessage;
  let ok = true;
  try {
    if (!env) throw new Error('the task worker is not started');
    r = await runAttempt(message, control, env);
  } catch (error) {
    logger.error({ taskId: message.task.taskId, err: (error as Error).message }, 'task attempt failed unexpectedly');
    r = { type: 'task-result', taskId: message.task.taskId, status: 'failed', errorCode: 'worker_error', errorMessage: (error as Error).message };
    ok = false;
  }
  const stopped = control.terminating || control.terminateReason !== null;
  // Only an attempt that wrote its own terminal state, or left its success to the host, leaves a
  // process fit for another one.
  const clean = r.status === 'succeeded' || r.status === 'failed' || r.status === 'cancelled' || r.status === 'returned';
  const reusable = ok && clean && !stopped && (await leftNothing());
  await send({ ...r, reusable });
  if (!reusable) process.exit(ok ? 0 : 1);
  running = null;
}

process.on('message', (message: TaskHostMessage) => {
  if (message?.type === 'terminate') {
    control.terminateReason = message.reason;
    return;
  }
  if (message?.type !== 'run-task' || running) return;
  running = message;
  void attempt(message);
});
process.on('SIGTERM', () => {
  if (control.terminating) return;
  control.terminating = true;
  if (!running) process.exit(143); // no attempt: nothing to stop
  const current = running;
  control.abort?.(new Error('the worker is shutting down'));
  // The host SIGKILLs after its grace period: report before that if the handler has not returned.
  const windowMs = Math.max(0, current.terminateGraceMs - Math.min(500, Math.floor(current.terminateGraceMs / 4)));
  setTimeout(() => {
    void send({
      type: 'task-result',
      taskId: current.task.taskId,
      status: 'interrupted',
      errorCode: 'interrupted_by_shutdown',
      errorMessage: 'the attempt did not stop within the termination grace period',
      reusable: false,
    }).then(() => process.exit(143));
  }, windowMs);
});
process.on('SIGINT', () => {
  /* the host decides (see the header) */
});
exitWithParent();

async function start(): Promise<void> {
  // Warm what every attempt needs (its connection, the TypeScript loader, the registry) before 'ready'.
  const target = parseDatabaseUrl(process.env[DATABASE_URL_VARIABLE]);
  const store = (await openStoreLazily(target)) as BaseStore;
  // The host ends a transaction of ours past its budget; we report them (issue 40 item 2).
  store.onTransaction = reportTransactions((m) => void send(m), target, transactionBudgetFromEnv());
  await store.domainQuery('SELECT 1'); // the connection is open before the baseline
  if (process.env[PRELOAD_TS_VARIABLE] === '1') await ensureTsLoader();
  const tasksModule = process.env[PRELOAD_TASKS_MODULE_VARIABLE] ?? '';
  const isolation: ModuleIsolation = process.env[MODULE_ISOLATION_VARIABLE] === 'attempt' ? 'attempt' : 'process';
  env = { target, readerTarget: readerTargetOf(process.env, target), store, modules: new HandlerModules(isolation, tasksModule), logger };
  if (tasksModule) {
    // Warms the registry's dependencies; a module that fails here fails the attempt that
    // imports it, with its own error.
    await importUserModule(path.resolve(tasksModule), '?preload').catch(() => undefined);
  }
  // The process's own stdio streams, made now: Node makes process.stderr on the first socket
  // destroyed (a read handle closed after an attempt), which would look like the attempt's.
  void process.stdout;
  void process.stderr;
  baseline = resources();
  baselineConnections = storeConnections();
  await send({ type: 'ready', pid: process.pid });
}

start().catch((error: unknown) => {
  logger.error({ err: (error as Error).message }, 'task worker failed to start');
  process.exit(1);
});
