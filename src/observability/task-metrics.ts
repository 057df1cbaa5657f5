/**
 * Durable task metrics on /metrics (issue 16 "Operating tasks"): active tasks by state and type
 * (read from the database, bounded and cached like the other persisted facts), and the embedded
 * runner's claims, ended attempts by outcome, failures by reason (error code), attempt
 * durations and its reconciler's last successful sweep. Labels: task_type, state, outcome,
 * reason (bounded by the runner); task ids and attempt tokens are never labels.
 */
import client from 'prom-client';
import type { TaskRunner } from '../tasks/task-runner.ts';
import type { PersistedFacts } from './facts.ts';

const PREFIX = 'durable_task_';

/** Counter increments from cumulative numbers (a restarted runner starts again from zero). */
function delta(last: Map<string, number>, key: string, current: number): number {
  const previous = last.get(key);
  last.set(key, current);
  if (previous === undefined) return current;
  return current >= previous ? current - previous : current;
}

export function registerTaskMetrics(registry: client.Registry, facts: PersistedFacts, runner: TaskRunner | null): { close(): void } {
  new client.Gauge({
    name: `${PREFIX}tasks`,
    help: 'Active durable tasks by state (pending, running) and type, from the database (bounded read; see durable_task_tasks_capped).',
    labelNames: ['state', 'task_type'],
    registers: [registry],
    async collect() {
      const active = await facts.activeTasks();
      this.reset();
      if (!active) return;
      for (const c of active.counts) this.set({ state: c.state, task_type: c.taskType }, c.n);
    },
  });
  new client.Gauge({
    name: `${PREFIX}tasks_capped`,
    help: '1 when the active-task count stopped at its cap (there may be more).',
    registers: [registry],
    async collect() {
      this.set((await facts.activeTasks())?.capped ? 1 : 0);
    },
  });
  if (!runner) return { close() {} };
  const stats = runner.stats;
  const seen = new Map<string, number>();
  const counter = (name: string, help: string, labelNames: string[], read: () => Iterable<[string, number]>) =>
    new client.Counter({
      name: `${PREFIX}${name}`,
      help,
      labelNames,
      registers: [registry],
      collect() {
        for (const [key, n] of read()) {
          const values = key.split('\t');
          this.inc(Object.fromEntries(labelNames.map((l, i) => [l, values[i]])), delta(seen, `${name}\t${key}`, n));
        }
      },
    });
  counter('claims_total', "Tasks claimed by this host's runner.", ['task_type'], () => stats.claims);
  counter(
    'attempts_total',
    "Attempts ended by this host's runner, by outcome (succeeded, failed, cancelled, requeued).",
    ['task_type', 'outcome'],
    () => stats.outcomes,
  );
  counter('failures_total', "Attempts that ended without success, by reason (the task's error code; bounded).", ['task_type', 'reason'], () => stats.failures);
  counter('success_commits_total', "Group commits of the successes this host's worker processes reported (pc_task_succeed_batch calls).", [], () => [
    ['', runner.successes.batches],
  ]);
  counter('success_commit_items_total', 'Successes in those group commits (divided by the commits: the group size).', [], () => [['', runner.successes.items]]);
  counter('sweeps_total', "Reconciler sweeps of this host's runner.", [], () => [['', stats.sweeps]]);
  counter('sweep_failures_total', 'Reconciler sweeps whose reconciliation failed.', [], () => [['', stats.sweepFailures]]);
  new client.Gauge({
    name: `${PREFIX}reconciler_healthy`,
    help: '1 while the reconciler swept successfully within two sweep periods (the readiness fact is published only then).',
    registers: [registry],
    collect() {
      this.set(runner.reconcilerHealthy() ? 1 : 0);
    },
  });
  const duration = new client.Histogram({
    name: `${PREFIX}attempt_duration_seconds`,
    help: "Duration of attempts run by this host's runner, from launch to their end.",
    labelNames: ['task_type', 'outcome'],
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 26 * 3600],
    registers: [registry],
  });
  const observe = (taskType: string, outcome: string, ms: number) => {
    if (ms >= 0) duration.observe({ task_type: taskType, outcome }, ms / 1000);
  };
  stats.onAttemptEnded = observe;
  return {
    close() {
      if (stats.onAttemptEnded === observe) stats.onAttemptEnded = null;
    },
  };
}
