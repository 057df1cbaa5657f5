/**
 * One chaos trial: a fresh database, real candidates, the driver appending inputs for `seconds`
 * while faults land every 0.8-2.5 s, then the fault window closes (every paused process resumed,
 * every dead candidate restarted), the drain (chaos/drain.ts: fails on a stall, hard-bounded) and the invariant check. Two PRNG streams
 * from the seed: the driver's and the fault schedule's (kinds, targets, durations).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkInvariants, unsettledKeys, type CheckStats, type Violation } from './checker.ts';
import { Cluster } from './cluster.ts';
import { openTrialDb } from './db.ts';
import { driveOnce, type DriverStats } from './driver.ts';
import { FAMILIES } from './families.ts';
import { FaultInjector, TASK_FAULTS, kindsFor, type FaultRecord } from './faults.ts';
import { drain } from './drain.ts';
import { DIR_VARIABLE, MISBEHAVE_VARIABLE, SEED_VARIABLE, journalFile, readJournal, type JournalEvent } from './journal.ts';
import { Prng } from './prng.ts';
import { killAll } from './procs.ts';
import { checkStatus, checkStatusSettled } from './status.ts';
import { checkTasks, emptyTaskStats, readTaskLog, taskRecoveryMs, unsettledTasks, type TaskLogRow, type TaskStats } from './task-checker.ts';
import { submitTask, taskService } from './task-driver.ts';

export interface TrialOptions {
  backend: 'sqlite' | 'mysql';
  seed: string;
  seconds: number;
  /** The drain fails after this long without movement (chaos/drain.ts). */
  drainSeconds: number;
  /** The drain's hard bound; default 3 x drainSeconds. */
  drainMaxSeconds?: number;
  faults: boolean;
  crashPoints: boolean;
  misbehave: number;
  scopes: number;
  /** Durable tasks submitted per driver step (probability); 0: none. */
  taskRate?: number;
  /** Only these fault kinds (a targeted run, e.g. crash:mid_scan); default: every kind of the backend. */
  kinds?: string[];
}

export interface TrialResult {
  options: TrialOptions;
  faults: FaultRecord[];
  driver: DriverStats;
  behaviours: Record<string, number>;
  invocations: number;
  drained: boolean;
  drainMs: number;
  /** The longest time without movement during the drain. */
  drainStallMs: number;
  unsettled: string[];
  violations: Violation[];
  recoveriesMs: Array<{ kind: string; ms: number | null }>;
  /** Crash points reached (APSUP_FAULT_*), by name. */
  crashHits: Record<string, number>;
  check: CheckStats;
  /** Durable tasks: submitted, terminal states, attempts, requeues, fenced writes. */
  tasks: TaskStats & { submitted: number };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Fault to the end of the first invocation that started after it and committed. */
export function recoveries(faults: FaultRecord[], journal: JournalEvent[], taskLog: TaskLogRow[] = []): Array<{ kind: string; ms: number | null }> {
  const ends = journal.filter((e) => e.ev === 'end' && e.how === 'ok');
  const starts = journal.filter((e) => e.ev === 'start');
  return faults.map((f) => {
    if (TASK_FAULTS.includes(f.kind)) return { kind: f.kind, ms: taskRecoveryMs(f.t, taskLog) };
    for (const s of starts) {
      if (s.t <= f.t) continue;
      const end = ends.find(
        (e) => e.pid === s.pid && e.family === s.family && e.scope === s.scope && e.claimed === s.claimed && e.sgen === s.sgen && e.t >= s.t,
      );
      if (end) return { kind: f.kind, ms: end.t - f.t };
    }
    return { kind: f.kind, ms: null };
  });
}

export async function runTrial(options: TrialOptions, log: (line: string) => void = () => undefined): Promise<TrialResult> {
  const driveRng = new Prng(`${options.seed}/drive`);
  const faultRng = new Prng(`${options.seed}/faults`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-chaos-'));
  const db = await openTrialDb(options.backend);
  const cluster = new Cluster(db, { [DIR_VARIABLE]: dir, [SEED_VARIABLE]: options.seed, [MISBEHAVE_VARIABLE]: String(options.misbehave) });
  const driver: DriverStats = { appends: 0, inputs: 0, requests: 0, errors: 0 };
  const submitted = { tasks: 0, errors: 0 };
  const taskRate = options.taskRate ?? 0.06;
  try {
    const service = await taskService(db);
    cluster.fill();
    const startDeadline = Date.now() + 60_000;
    while (!(await cluster.leader())) {
      if (Date.now() > startDeadline) throw new Error(`no leader within 60 s: ${await cluster.describe()}`);
      await sleep(100);
    }
    const t0 = Date.now();
    const injector = new FaultInjector(cluster, faultRng, t0, kindsFor(options.backend, options.crashPoints, options.kinds));
    let nextFault = t0 + faultRng.int(800, 2000);
    // One task from the start: a slow machine makes few steps in a short trial, and with none
    // submitted the trial tests no task under the faults (seen: none in about 26 steps at 0.15).
    if (taskRate > 0) await submitTask(service, driveRng, submitted);
    while (Date.now() - t0 < options.seconds * 1000) {
      await driveOnce(db, driveRng, FAMILIES, options.scopes, driver);
      if (driveRng.next() < taskRate) await submitTask(service, driveRng, submitted);
      if (options.faults && Date.now() >= nextFault) {
        await injector.inject();
        nextFault = Date.now() + faultRng.int(800, 2500);
      }
      if (!injector.pending) cluster.fill();
      await sleep(driveRng.int(20, 150));
    }
    injector.settle();
    const journalBytes = () => {
      try {
        return fs.statSync(journalFile(dir)).size;
      } catch {
        return 0;
      }
    };
    const outcome = await drain(
      {
        unsettled: async () => [...(await unsettledKeys(db)), ...(await unsettledTasks(db)).map((id) => `task ${id}`)],
        progress: async () => journalBytes() + Number((await db.exec('SELECT COUNT(*) AS n FROM ch_task_log'))[0]?.n ?? 0),
        tick: () => cluster.fill(),
      },
      { stallMs: options.drainSeconds * 1000, maxMs: (options.drainMaxSeconds ?? options.drainSeconds * 3) * 1000 },
    );
    const { drained, unsettled } = outcome;
    const drainMs = outcome.ms;
    const journal = readJournal(dir);
    const check: CheckStats = { outputs: 0, historyRows: 0, writesPastExpiry: 0 };
    const violations = await checkInvariants(db, journal, drained, check);
    const taskStats = emptyTaskStats();
    violations.push(...(await checkTasks(db, drained, taskStats)));
    const taskLog = await readTaskLog(db);
    // An armed candidate may pass its crash point after the drain (and SIGKILL itself): a
    // supervisor missing only meanwhile is its restart, not a finding (bounded: 3 checks).
    violations.push(
      ...(await checkStatusSettled(
        () => checkStatus(db.url, drained),
        () => cluster.fill(),
        sleep,
      )),
    );
    const behaviours: Record<string, number> = {};
    for (const e of journal) if (e.ev === 'behaviour') behaviours[String(e.behaviour)] = (behaviours[String(e.behaviour)] ?? 0) + 1;
    if (!drained) {
      const stuck = await db
        .exec(
          "SELECT task_id, state, attempt_count, attempt_owner, lease_expires_at, error_code FROM pc_durable_tasks WHERE state IN ('pending', 'running') ORDER BY task_id LIMIT 5",
        )
        .catch(() => []);
      if (stuck.length > 0) log(`  unsettled tasks: ${JSON.stringify(stuck)}`);
    }
    if (!drained)
      log(
        `  drain timeout: ${unsettled.join(', ')}; last candidate lines: ${cluster
          .live()
          .map((c) => c.tail.slice(-2).join(' | '))
          .join(' || ')}`,
      );
    return {
      options,
      faults: injector.schedule,
      driver,
      behaviours,
      invocations: journal.filter((e) => e.ev === 'start').length,
      drained,
      drainMs,
      drainStallMs: outcome.longestStallMs,
      unsettled,
      violations,
      check,
      recoveriesMs: recoveries(injector.schedule, journal, taskLog),
      tasks: { ...taskStats, submitted: submitted.tasks },
      crashHits: cluster.candidates.flatMap((c) => c.faultHits).reduce<Record<string, number>>((m, h) => ({ ...m, [h]: (m[h] ?? 0) + 1 }), {}),
    };
  } finally {
    killAll();
    // APSUP_CHAOS_KEEP=1: keep the trial's database and journal for a post-mortem (printed).
    if (process.env.APSUP_CHAOS_KEEP === '1') log(`  kept: database ${db.name}, journal ${dir}`);
    else {
      await db.cleanup().catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}
