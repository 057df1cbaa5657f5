// What an operator installs next to /metrics (ops/grafana, ops/prometheus): every metric the
// dashboard and the alert rules reference exists in the runtime's registry (runtime, durable
// task and the default process/Node.js metrics), with the labels they group by; the gauge of
// the configured budget is not named like a counter.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import client from 'prom-client';
import { createRuntimeMetrics } from '../../src/observability/metrics.ts';
import { registerTaskMetrics } from '../../src/observability/task-metrics.ts';
import type { PersistedFacts } from '../../src/observability/facts.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import type { TaskRunner } from '../../src/tasks/task-runner.ts';
import { PACKAGE_ROOT } from '../../src/paths.ts';

const DASHBOARD = path.join(PACKAGE_ROOT, 'ops', 'grafana', 'artifact-processing-supervisor.json');
const ALERTS = path.join(PACKAGE_ROOT, 'ops', 'prometheus', 'alerts.yml');

/** A registry as `apsup run` builds it, over a runtime and a runner that have nothing yet. */
async function registryMetrics(defaultMetrics = true): Promise<{ types: Map<string, string>; labels: Set<string>; text: string }> {
  const runtime = { supervisors: [], status: () => ({ families: [], supervisors: [] }) } as unknown as Runtime;
  const facts = { owed: async () => new Map(), activeTasks: async () => null } as unknown as PersistedFacts;
  const runner = {
    stats: { claims: [], outcomes: [], failures: [], sweeps: 0, sweepFailures: 0, onAttemptEnded: null },
    reconcilerHealthy: () => true,
    successes: { batches: 0, items: 0 },
  } as unknown as TaskRunner;
  const metrics = createRuntimeMetrics(runtime, facts, { defaultMetrics });
  registerTaskMetrics(metrics.registry, facts, runner);
  const text = await metrics.registry.metrics();
  const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
  const labels = new Set<string>(['le', 'instance', 'job']);
  for (const m of metrics.registry.getMetricsAsArray()) for (const l of (m as unknown as { labelNames: string[] }).labelNames ?? []) labels.add(l);
  metrics.close();
  return { types, labels, text };
}

/** The PromQL expressions of the alert rules (single-line and folded `>` values). */
function alertExpressions(): Array<{ alert: string; expr: string }> {
  const lines = fs.readFileSync(ALERTS, 'utf8').split('\n');
  const out: Array<{ alert: string; expr: string }> = [];
  let alert = '';
  for (let i = 0; i < lines.length; i += 1) {
    const a = /^\s*- alert: (\S+)/.exec(lines[i]);
    if (a) alert = a[1];
    const e = /^(\s*)expr: (.*)$/.exec(lines[i]);
    if (!e) continue;
    if (e[2].trim() !== '>') {
      out.push({ alert, expr: e[2] });
      continue;
    }
    const body: string[] = [];
    while (i + 1 < lines.length && lines[i + 1].startsWith(`${e[1]}  `)) body.push(lines[(i += 1)].trim());
    out.push({ alert, expr: body.join(' ') });
  }
  return out;
}

function dashboardExpressions(): string[] {
  const dash = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as {
    panels: Array<{ type: string; targets?: Array<{ expr: string }> }>;
    templating: { list: Array<{ query?: unknown; definition?: string }> };
  };
  const exprs = dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  for (const v of dash.templating.list) if (v.definition) exprs.push(v.definition);
  return exprs;
}

const FUNCTIONS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'delta',
  'deriv',
  'absent',
  'histogram_quantile',
  'label_values',
  'by',
  'without',
  'and',
  'or',
  'unless',
  'on',
  'ignoring',
  'offset',
  'bool',
  'max_over_time',
  'min_over_time',
  'avg_over_time',
]);

/** Metric names an expression reads: identifiers that are neither functions, keywords, labels nor inside quotes/braces' values. */
function metricNames(expr: string, labels: Set<string>): string[] {
  const code = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\$\{?[A-Za-z_]+\}?/g, '')
    .replace(/\[[^\]]*\]/g, '');
  const names = new Set<string>();
  for (const m of code.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const id = m[0];
    if (FUNCTIONS.has(id) || labels.has(id) || /^\d/.test(id)) continue;
    names.add(id);
  }
  return [...names];
}

function exists(name: string, types: Map<string, string>): boolean {
  if (types.has(name)) return true;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return base !== name && types.get(base) === 'histogram';
}

test('every metric the Grafana dashboard and the Prometheus alert rules reference exists in the registry', async () => {
  const { types, labels } = await registryMetrics();
  const alerts = alertExpressions();
  for (const required of [
    'ArtifactProcessingLeaderMissing',
    'ArtifactProcessingFamilyDegraded',
    'ArtifactProcessingOwedRequestsGrowing',
    'ArtifactProcessingFailuresRising',
  ]) {
    assert.ok(
      alerts.some((a) => a.alert === required),
      `alert ${required} is defined`,
    );
  }
  const sources = [
    ...alerts.map((a) => ({ where: `alert ${a.alert}`, expr: a.expr })),
    ...dashboardExpressions().map((expr) => ({ where: 'dashboard', expr })),
  ];
  assert.ok(sources.length > 25);
  let referenced = 0;
  for (const { where, expr } of sources) {
    const names = metricNames(expr, labels);
    assert.ok(names.length > 0, `${where}: ${expr} reads a metric`);
    for (const name of names) {
      assert.ok(exists(name, types), `${where} references ${name}, which the registry does not have (${expr})`);
      referenced += 1;
    }
    for (const m of expr.matchAll(/\bby \(([^)]*)\)/g)) {
      for (const l of m[1].split(',').map((x) => x.trim())) assert.ok(labels.has(l), `${where} groups by ${l}, which no metric has`);
    }
  }
  assert.ok(referenced > 30);
  // The check can fail: a name the registry lacks is caught.
  assert.equal(exists('artifact_processing_budget_total', types), false);
  assert.deepEqual(metricNames('sum by (family) (rate(artifact_processing_nope_total{family=~"$family"}[5m]))', labels), ['artifact_processing_nope_total']);
});

test('the configured budget is a gauge without _total (artifact_processing_budget_limit); process and Node.js metrics are exposed by default', async () => {
  const { types } = await registryMetrics();
  assert.equal(types.get('artifact_processing_budget_limit'), 'gauge');
  // Ours only: prom-client's nodejs_active_handles_total and friends are gauges of its own naming.
  const ours = [...types].filter(([name]) => /^(artifact_processing|durable_task)_/.test(name));
  assert.ok(ours.length > 20);
  for (const [name, type] of ours) if (name.endsWith('_total')) assert.equal(type, 'counter', `${name} ends in _total but is a ${type}`);
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes']) {
    assert.ok(types.has(name), `${name} (default metrics)`);
  }
  const without = await registryMetrics(false);
  assert.equal(without.types.has('process_cpu_seconds_total'), false, 'defaultMetrics: false leaves them out');
  assert.ok(client.register instanceof client.Registry);
});
