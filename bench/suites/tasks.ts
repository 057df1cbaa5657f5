/**
 * tasks: durable no-op tasks through `apsup tasks worker` (issue 12 item 2), on each backend
 * (SQLite once per --sqlite-synchronous setting), and graphile-worker, pg-boss and BullMQ on
 * the same work, their repetitions interleaved (repetition r of every system before r + 1).
 * Per system and repetition:
 *   throughput  N no-op tasks submitted first (one call each, timed: submits/s), then the worker
 *               starts; tasks/s from the first claim to the last completion (ours: started_at and
 *               finished_at, database clock; peers: first handler start to last completion event,
 *               pg-boss: last handler return). Worker start-up is outside the clock: the peers'
 *               workers are in-process and ready at once; ours drains those N tasks while its
 *               worker processes start (reported as "incl. start-up"), then a second backlog of N,
 *               submitted in one transaction, is measured with the processes warm.
 *   latency     with the worker warm, T tasks submitted one every G ms from this process (open
 *               loop); submit to handler start p50/p95/p99 (ours: the handler's wall clock in
 *               bench_task_starts, written in its completion transaction).
 * Each figure is printed with the system's durability setting, read from the server. A peer
 * whose server does not answer is reported as skipped with the reason.
 */
import type { ChildProcess } from 'node:child_process';
import { median, printTable, progress, writeResult } from '../lib/report.ts';
import { openBenchDatabase } from '../lib/fixture.ts';
import { percentile } from '../lib/runtime-host.ts';
import { ourDurability } from '../lib/durability.ts';
import {
  claimToCompletionSeconds,
  ourLatency,
  prepareOurTasks,
  startTaskWorker,
  stopTaskWorker,
  submitNoopBacklog,
  submitNoops,
  waitTasksDone,
  type OurTasks,
} from '../lib/task-worker.ts';
import { openPeers } from '../lib/peers/open.ts';
import type { QueuePeer } from '../lib/peers/types.ts';
import type { SqliteSynchronous } from '../../src/store/sqlite/synchronous.ts';
import type { Backend } from '../../src/store/types.ts';

export interface TasksOptions {
  backends: Backend[];
  tasks: number;
  workers: number;
  repeat: number;
  peer: boolean;
  triggers: number;
  gapMs: number;
  synchronous: SqliteSynchronous[];
}

export interface TasksRun {
  perSecond: number;
  /** Ours only: the first backlog, drained while the worker's processes start. */
  coldPerSecond?: number;
  submitPerSecond: number;
  p50: number;
  p95: number;
  p99: number;
  failures: number;
}

export interface TasksRow {
  system: string;
  backend: string;
  durability: string;
  notes: string;
  runs: TasksRun[];
  perSecond: number;
  coldPerSecond: number | null;
  submitPerSecond: number;
  p50: number;
  p95: number;
  p99: number;
}

interface System {
  label: string;
  backend: string;
  durability: string;
  notes: string;
  runs: TasksRun[];
  once(rep: number): Promise<TasksRun>;
  close(): Promise<void>;
}

function latencyFigures(sorted: number[]): Pick<TasksRun, 'p50' | 'p95' | 'p99'> {
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}

async function ourSystem(backend: Backend, synchronous: SqliteSynchronous, options: TasksOptions): Promise<System> {
  const fx = await openBenchDatabase(backend);
  const ours: OurTasks = await prepareOurTasks(fx, options.workers, synchronous);
  const label = `apsup tasks worker (${backend}${backend === 'sqlite' ? ` ${synchronous}` : ''})`;
  return {
    label,
    backend,
    durability: await ourDurability(fx, synchronous),
    notes: `capacity ${options.workers}`,
    runs: [],
    async once(rep) {
      const submitted = await submitNoops(ours, options.tasks);
      const first = submitted.ids[0];
      const last = submitted.ids.at(-1)!;
      let child: ChildProcess | null = null;
      try {
        child = startTaskWorker(ours, `tasks-${backend}-${synchronous}`);
        await waitTasksDone(ours, first, last, 1_800_000, child);
        const coldSeconds = await claimToCompletionSeconds(ours, first, last);
        const backlog = await submitNoopBacklog(ours, options.tasks);
        const states = await waitTasksDone(ours, backlog[0]!, backlog.at(-1)!, 1_800_000, child);
        const seconds = await claimToCompletionSeconds(ours, backlog[0]!, backlog.at(-1)!);
        const lat = await ourLatency(ours, options.triggers, options.gapMs, child);
        const run: TasksRun = {
          perSecond: options.tasks / seconds,
          coldPerSecond: options.tasks / coldSeconds,
          submitPerSecond: submitted.perSecond,
          ...latencyFigures(lat),
          failures: options.tasks - (states.succeeded ?? 0),
        };
        progress(
          `${label}: repetition ${rep + 1}/${options.repeat}: ${Math.round(run.perSecond * 100) / 100} tasks/s (${Math.round(run.coldPerSecond!)} incl. start-up), ${Math.round(run.submitPerSecond)} submits/s, submit->start p50 ${run.p50.toFixed(1)} p99 ${run.p99.toFixed(1)} ms${run.failures ? `, ${run.failures} not succeeded` : ''}`,
        );
        return run;
      } finally {
        if (child) await stopTaskWorker(child);
      }
    },
    close: () => fx.close(),
  };
}

function peerSystem(peer: QueuePeer, options: TasksOptions): System {
  return {
    label: peer.name,
    backend: peer.backend,
    durability: peer.durability,
    notes: `concurrency ${options.workers}, ${peer.notes}`,
    runs: [],
    async once(rep) {
      const drain = await peer.drain(options.tasks, options.workers);
      const submitPerSecond = await peer.submitRate(options.tasks);
      const lat = await peer.latency(options.triggers, options.gapMs, options.workers);
      const run: TasksRun = { perSecond: drain.firstStartPerSecond, submitPerSecond, ...latencyFigures(lat), failures: 0 };
      progress(
        `${peer.name}: repetition ${rep + 1}/${options.repeat}: ${Math.round(run.perSecond)} jobs/s, ${Math.round(submitPerSecond)} submits/s, submit->start p50 ${run.p50.toFixed(1)} p99 ${run.p99.toFixed(1)} ms`,
      );
      return run;
    },
    close: () => peer.close(),
  };
}

export async function runTasksSuite(options: TasksOptions): Promise<{ rows: TasksRow[]; skipped: Array<{ name: string; reason: string }> }> {
  const systems: System[] = [];
  let skipped: Array<{ name: string; reason: string }> = [];
  try {
    for (const backend of options.backends) {
      for (const s of backend === 'sqlite' ? options.synchronous : (['NORMAL'] as SqliteSynchronous[])) systems.push(await ourSystem(backend, s, options));
    }
    if (options.peer) {
      const opened = await openPeers(options.workers);
      skipped = opened.skipped;
      for (const p of opened.peers) systems.push(peerSystem(p, options));
      for (const s of skipped) progress(`peer ${s.name}: skipped: ${s.reason}`);
    }
    for (let rep = 0; rep < options.repeat; rep += 1) {
      for (const s of systems) s.runs.push(await s.once(rep));
    }
  } finally {
    for (const s of systems) await s.close().catch((e: unknown) => progress(`${s.label}: close failed: ${(e as Error).message}`));
  }
  const rows: TasksRow[] = systems.map((s) => ({
    system: s.label,
    backend: s.backend,
    durability: s.durability,
    notes: s.notes,
    runs: s.runs,
    perSecond: median(s.runs.map((r) => r.perSecond)),
    coldPerSecond: s.runs.every((r) => r.coldPerSecond !== undefined) ? median(s.runs.map((r) => r.coldPerSecond!)) : null,
    submitPerSecond: median(s.runs.map((r) => r.submitPerSecond)),
    p50: median(s.runs.map((r) => r.p50)),
    p95: median(s.runs.map((r) => r.p95)),
    p99: median(s.runs.map((r) => r.p99)),
  }));
  const range = (xs: number[]) => (xs.length > 1 ? `${Math.round(Math.min(...xs) * 100) / 100} to ${Math.round(Math.max(...xs) * 100) / 100}` : '');
  printTable(
    `tasks: ${options.tasks.toLocaleString('en-US')} no-op tasks, capacity/concurrency ${options.workers}; latency ${options.triggers} submits one every ${options.gapMs} ms (median of ${options.repeat}, systems interleaved)`,
    [
      'system',
      'backend',
      'durability',
      'tasks/s (first claim to last completion)',
      'range',
      'tasks/s incl. worker start-up',
      'submits/s (one per call)',
      'submit->start p50 ms',
      'p95 ms',
      'p99 ms',
      'notes',
    ],
    [
      ...rows.map(
        (r) =>
          [
            r.system,
            r.backend,
            r.durability,
            r.perSecond,
            range(r.runs.map((x) => x.perSecond)),
            r.coldPerSecond ?? '-',
            r.submitPerSecond,
            r.p50,
            r.p95,
            r.p99,
            r.notes,
          ] as Array<string | number>,
      ),
      ...skipped.map((s) => [s.name, '-', '-', 'skipped', '', '', '', '', '', '', s.reason] as Array<string | number>),
    ],
  );
  console.log(`raw results: ${writeResult('tasks', { ...options, rows, skipped })}`);
  return { rows, skipped };
}
