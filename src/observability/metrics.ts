/**
 * Prometheus metrics of one runtime host (prom-client, a registry of its own). Numbers are read
 * at scrape time from Runtime.status() and the partitions (collect callbacks); cumulative numbers
 * of the runtime are exposed as counters that only ever increase (a value that went down — a
 * restarted component — adds its new value; renewal failures are counted cumulatively by the
 * term keeper, so a failure followed by a good renewal between two scrapes is still counted). Invocation durations come from the partitions' optional onInvocation hook.
 *
 * Labels are bounded: `family` (plus `reason` for failures, `supervisor_key` for terms). Scope,
 * worker, holder and request ids are never labels (RFC 12).
 */
import client from 'prom-client';
import type { Runtime } from '../runtime/runtime.ts';
import type { PersistedFacts } from './facts.ts';

const PREFIX = 'artifact_processing_';

/** Turns a cumulative number (that may restart from zero) into counter increments. */
class Monotonic {
  private readonly last = new Map<string, number>();

  delta(key: string, current: number): number {
    const previous = this.last.get(key);
    this.last.set(key, current);
    if (previous === undefined) return current;
    return current >= previous ? current - previous : current;
  }
}

export interface RuntimeMetrics {
  registry: client.Registry;
  /** Detaches the invocation hooks from the runtime's partitions. */
  close(): void;
}

/**
 * Sampling resolution of the event-loop delay histogram of the default metrics (prom-client's
 * default is 10 ms): 100 ms still shows a stalled loop and wakes an idle host ten times less.
 */
export const EVENT_LOOP_MONITORING_PRECISION_MS = 100;

export function createRuntimeMetrics(runtime: Runtime, facts: PersistedFacts, options: { defaultMetrics?: boolean } = {}): RuntimeMetrics {
  const registry = new client.Registry();
  // Process and Node.js metrics (process_*, nodejs_*), unprefixed as the usual dashboards expect.
  if (options.defaultMetrics ?? true) client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS });
  const partitions = () => runtime.supervisors.flatMap((s) => s.partitions);
  const families = () => runtime.status().families;

  const gauge = (name: string, help: string, read: (f: ReturnType<typeof families>[number]) => number) =>
    new client.Gauge({
      name: `${PREFIX}${name}`,
      help,
      labelNames: ['family'],
      registers: [registry],
      collect() {
        this.reset();
        for (const f of families()) this.set({ family: f.family }, read(f));
      },
    });
  gauge('budget_available', 'Worker budget of the family not in use (budget - running).', (f) => Math.max(0, f.budget - f.running));
  gauge('budget_used', 'Workers of the family running an invocation.', (f) => f.running);
  // A gauge: no _total suffix (reserved for counters); was artifact_processing_budget_total.
  gauge('budget_limit', 'Configured worker budget of the family (_MAX_WORKERS).', (f) => f.budget);
  gauge('ready', "Keys in the family's bounded ready queue.", (f) => f.ready);
  gauge('retry_wait', 'Keys of the family waiting for a retry (backoff).', (f) => f.retryWait);
  gauge('degraded', "1 when the family's last examination or pending-work provider failed.", (f) => (f.health === 'degraded' ? 1 : 0));

  new client.Gauge({
    name: `${PREFIX}discovery_latency_seconds`,
    help: "Duration of the family's last owed-request discovery read.",
    labelNames: ['family'],
    registers: [registry],
    collect() {
      this.reset();
      for (const p of partitions()) this.set({ family: p.family }, p.discoveryLatencyMs / 1000);
    },
  });

  new client.Gauge({
    name: `${PREFIX}owed_requests`,
    help: 'Accepted requests not yet confirmed (persisted; counted up to a cap, see owed_requests_capped).',
    labelNames: ['family'],
    registers: [registry],
    async collect() {
      const owed = await facts.owed();
      this.reset();
      for (const [family, c] of owed) this.set({ family }, c.owed);
    },
  });
  new client.Gauge({
    name: `${PREFIX}owed_requests_capped`,
    help: '1 when the owed-request count of the family stopped at its cap (there may be more).',
    labelNames: ['family'],
    registers: [registry],
    async collect() {
      const owed = await facts.owed();
      this.reset();
      for (const [family, c] of owed) this.set({ family }, c.capped ? 1 : 0);
    },
  });

  const seen = new Monotonic();
  new client.Counter({
    name: `${PREFIX}invocations_total`,
    help: 'Invocations dispatched to a worker.',
    labelNames: ['family'],
    registers: [registry],
    collect() {
      for (const f of families()) this.inc({ family: f.family }, seen.delta(`inv/${f.family}`, f.invocations));
    },
  });
  new client.Counter({
    name: `${PREFIX}failures_total`,
    help: 'Failed invocations by reason (timeouts included as reason="timeout").',
    labelNames: ['family', 'reason'],
    registers: [registry],
    collect() {
      for (const f of families()) {
        for (const [reason, n] of Object.entries(f.failures)) this.inc({ family: f.family, reason }, seen.delta(`fail/${f.family}/${reason}`, n));
      }
    },
  });
  new client.Counter({
    name: `${PREFIX}timeouts_total`,
    help: 'Invocations ended by the worker timeout.',
    labelNames: ['family'],
    registers: [registry],
    collect() {
      for (const f of families()) this.inc({ family: f.family }, seen.delta(`timeout/${f.family}`, f.timeouts));
    },
  });
  new client.Counter({
    name: `${PREFIX}term_changes_total`,
    help: 'Terms acquired or lost by this host for the supervisor key.',
    labelNames: ['supervisor_key'],
    registers: [registry],
    collect() {
      for (const s of runtime.status().supervisors) this.inc({ supervisor_key: s.supervisorKey }, seen.delta(`term/${s.supervisorKey}`, s.termChanges));
    },
  });
  new client.Counter({
    name: `${PREFIX}renewal_failures_total`,
    help: 'Failed lease renewals for the supervisor key (as observed at scrape time).',
    labelNames: ['supervisor_key'],
    registers: [registry],
    collect() {
      for (const s of runtime.status().supervisors)
        this.inc({ supervisor_key: s.supervisorKey }, seen.delta(`renew/${s.supervisorKey}`, s.renewalFailuresTotal));
    },
  });
  new client.Gauge({
    name: `${PREFIX}supervisor_leader`,
    help: '1 when this host holds the term of the supervisor key.',
    labelNames: ['supervisor_key'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of runtime.status().supervisors) this.set({ supervisor_key: s.supervisorKey }, s.state === 'leader' ? 1 : 0);
    },
  });

  const duration = new client.Histogram({
    name: `${PREFIX}invocation_duration_seconds`,
    help: "Duration of worker invocations, from dispatch to the worker's outcome.",
    labelNames: ['family'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
    registers: [registry],
  });
  const observe = (family: string, _outcome: string, durationMs: number) => duration.observe({ family }, durationMs / 1000);
  for (const p of partitions()) {
    duration.zero({ family: p.family });
    p.onInvocation = observe;
  }

  return {
    registry,
    close() {
      for (const p of partitions()) if (p.onInvocation === observe) p.onInvocation = null;
    },
  };
}
