/**
 * The console's data: one open store and the families' configuration, read through the same
 * store operations as the CLI (`apsup status`: statusFromStore; `apsup tasks`: TaskAdminStore),
 * plus the host's live view when mounted in `apsup run` (live.ts). Nothing here writes; the
 * actions are in actions.ts.
 */
import type { RuntimeConfig } from '../config/runtime-config.ts';
import { type StatusReport, statusFromStore } from '../cli/status.ts';
import type { BaseStore } from '../store/base-store.ts';
import type { Store } from '../store/types.ts';
import { TaskStore } from '../tasks/task-store.ts';
import type { LiveSource } from './live.ts';
import { SampleRing } from './samples.ts';
import { type SchemaState, SchemaWatch } from './schema-state.ts';
import { type TermChange, TermHistory } from './term-history.ts';

/** Active tasks read at most (pc_task_count_active's bound). */
export const TASK_COUNT_CAP = 100_000;
/** Failed tasks the overview shows with their errors. */
export const RECENT_FAILURES = 5;

export interface RecentFailure {
  taskId: number;
  taskType: string;
  finishedAt: string | null;
  errorCode: string | null;
  errorMessage: string | null;
}

export interface ConsoleSourceOptions {
  store: Store;
  config: RuntimeConfig;
  live?: LiveSource | null;
  /** Wall clock of the samples (tests inject one). */
  now?: () => number;
}

export class ConsoleSource {
  readonly store: Store;
  readonly config: RuntimeConfig;
  readonly live: LiveSource | null;
  readonly tasks: TaskStore;
  readonly terms = new TermHistory();
  readonly samples = new SampleRing();
  private readonly schema: SchemaWatch;
  private readonly now: () => number;

  constructor(options: ConsoleSourceOptions) {
    this.store = options.store;
    this.config = options.config;
    this.live = options.live ?? null;
    this.tasks = new TaskStore(options.store as BaseStore);
    this.schema = new SchemaWatch(options.config.database);
    this.now = options.now ?? Date.now;
  }

  family(name: string) {
    return this.config.families.find((f) => f.registration.family === name) ?? null;
  }

  async status(): Promise<StatusReport> {
    const report = await statusFromStore(this.store, this.config);
    this.terms.observe(report.supervisors, report.dbNow);
    return report;
  }

  async overview(): Promise<Overview> {
    const report = await this.status();
    const [schema, active, readiness] = [await this.schema.read(), await this.tasks.countActive(TASK_COUNT_CAP), await this.tasks.readReadiness()];
    const recentFailures = await this.recentFailures(RECENT_FAILURES);
    const cap = await this.tasks.readCapacity();
    const live = this.live?.status() ?? null;
    const families = report.families.map((f) => {
      const stats = live?.families.find((x) => x.family === f.family) ?? null;
      return {
        ...f,
        schedule: policyText(f.policy),
        maxWorkers: this.family(f.family)?.maxWorkers ?? null,
        live: stats && {
          budget: stats.budget,
          running: stats.running,
          ready: stats.ready,
          retryWait: stats.retryWait,
          health: stats.health,
          lastError: stats.lastError,
          invocations: stats.invocations,
          failures: Object.values(stats.failures).reduce((a, b) => a + b, 0),
          timeouts: stats.timeouts,
          workerProcesses: stats.workerProcesses,
        },
      };
    });
    const byState = (state: string) => active.counts.filter((c) => c.state === state).reduce((a, c) => a + c.n, 0);
    const sum = (pick: (f: (typeof families)[number]) => number | undefined) => families.reduce((a, f) => a + (pick(f) ?? 0), 0);
    this.samples.add({
      at: this.now(),
      owed: sum((f) => f.owedInvocations),
      backlog: sum((f) => f.ordinaryBacklog),
      tasksPending: byState('pending'),
      tasksRunning: byState('running'),
      invocations: live ? sum((f) => f.live?.invocations) : null,
      failures: live ? sum((f) => f.live?.failures) : null,
      latencyMs: this.live?.latencyMs() ?? null,
    });
    return {
      backend: report.backend,
      database: report.database,
      dbNow: report.dbNow,
      mode: report.mode,
      maintenance: report.maintenance,
      sqliteHost: report.sqliteHost,
      schema,
      supervisors: report.supervisors.map((s) => ({ ...s, active: report.mode === null || s.mode === report.mode })),
      termHistory: this.terms.list(),
      host: live && {
        role: live.role,
        mode: live.mode,
        holderId: live.holderId,
        supervisors: live.supervisors,
      },
      families,
      tasks: {
        counts: active.counts,
        capped: active.capped,
        pending: byState('pending'),
        running: byState('running'),
        liveWorkers: readiness.liveWorkers,
        claimCap: cap?.capacity ?? null,
        claimsRunning: cap?.running ?? null,
        recentFailures,
      },
      series: this.samples.series(['invocations', 'failures']),
      countCap: report.countCap,
    };
  }

  /** The latest failed tasks with their errors (pc_task_list by state, then pc_task_read of each). */
  async recentFailures(limit: number): Promise<RecentFailure[]> {
    const page = await this.tasks.list({ state: 'failed', limit });
    const out: RecentFailure[] = [];
    for (const t of page.tasks) {
      const d = await this.tasks.read(t.taskId);
      if (d)
        out.push({
          taskId: d.taskId,
          taskType: d.taskType,
          finishedAt: d.finishedAt?.toISOString() ?? null,
          errorCode: d.errorCode,
          errorMessage: d.errorMessage,
        });
    }
    return out;
  }

  close(): void {
    this.live?.close();
  }
}

export function policyText(p: StatusReport['families'][number]['policy']): string {
  if (p.kind === 'interval') return `every ${p.seconds}s`;
  if (p.kind === 'cron') return `cron ${p.expression} (${p.timezone})`;
  return 'off';
}

export interface Overview {
  backend: string;
  database: string;
  dbNow: string;
  mode: string | null;
  maintenance: boolean;
  sqliteHost: StatusReport['sqliteHost'];
  schema: SchemaState;
  supervisors: Array<StatusReport['supervisors'][number] & { active: boolean }>;
  termHistory: TermChange[];
  host: { role: string; mode: string; holderId: string; supervisors: unknown[] } | null;
  families: Array<StatusReport['families'][number] & { schedule: string; maxWorkers: number | null; live: Record<string, unknown> | null }>;
  tasks: {
    counts: Array<{ state: string; taskType: string; n: number }>;
    capped: boolean;
    pending: number;
    running: number;
    liveWorkers: number;
    /** The database claim cap (ADR T6) and the running count it holds (pc_task_read_capacity). */
    claimCap: number | null;
    claimsRunning: number | null;
    recentFailures: RecentFailure[];
  };
  series: Record<string, Array<number | null>>;
  countCap: number;
}
