/**
 * `tsx chaos/report.ts <results.json>...`: the markdown tables of bench/CHAOS.md from the --out
 * files of `npm run chaos`: trials, faults injected by kind, crash points reached, behaviours,
 * violations and drain timeouts (each with its seed), recovery times (fault to the end of the
 * first invocation that started after it and committed).
 */
import fs from 'node:fs';
import type { TrialResult } from './trial.ts';

const results: TrialResult[] = process.argv.slice(2).flatMap((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as TrialResult[]);
const backends = [...new Set(results.map((r) => r.options.backend))];
const count = (items: string[]) => items.reduce<Record<string, number>>((m, k) => ({ ...m, [k]: (m[k] ?? 0) + 1 }), {});
const pct = (xs: number[], p: number) => (xs.length === 0 ? '-' : String(xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]));
const out: string[] = [];

out.push('| backend | trials | seconds each | inputs | explicit requests | invocations | outputs | lease history rows | safety violations | drain timeouts |');
out.push('|---|---|---|---|---|---|---|---|---|---|');
for (const b of backends) {
  const rs = results.filter((r) => r.options.backend === b);
  const sum = (f: (r: TrialResult) => number) => rs.reduce((s, r) => s + f(r), 0);
  out.push(
    `| ${b} | ${rs.length} | ${rs[0].options.seconds} | ${sum((r) => r.driver.inputs)} | ${sum((r) => r.driver.requests)} | ${sum((r) => r.invocations)} | ${sum((r) => r.check?.outputs ?? 0)} | ${sum((r) => r.check?.historyRows ?? 0)} | ${sum((r) => r.violations.length)} | ${rs.filter((r) => !r.drained).length} |`,
  );
}
out.push(
  '',
  '| backend | fault | injected | crash point reached | recovery p50 ms | p95 ms | max ms | no recovery seen |',
  '|---|---|---|---|---|---|---|---|',
);
for (const b of backends) {
  const rs = results.filter((r) => r.options.backend === b);
  const kinds = count(rs.flatMap((r) => r.faults.map((f) => f.kind)));
  const hits = count(rs.flatMap((r) => Object.entries(r.crashHits ?? {}).flatMap(([k, n]) => Array<string>(n).fill(k))));
  for (const [kind, n] of Object.entries(kinds).sort()) {
    const rec = rs.flatMap((r) => r.recoveriesMs.filter((x) => x.kind === kind));
    const ms = rec
      .map((x) => x.ms)
      .filter((x): x is number => x !== null)
      .sort((a, z) => a - z);
    const trialsHit = rs.filter((r) => (r.crashHits ?? {})[kind.slice(6)]).length;
    const point = kind.startsWith('crash:') ? `${hits[kind.slice(6)] ?? 0} passes in ${trialsHit} trials` : '';
    out.push(`| ${b} | ${kind} | ${n} | ${point} | ${pct(ms, 50)} | ${pct(ms, 95)} | ${ms.length ? ms[ms.length - 1] : '-'} | ${rec.length - ms.length} |`);
  }
}
out.push(
  '',
  "| backend | tasks submitted | succeeded | failed | attempts | lost attempts requeued | fenced task writes | task row history rows | late writes | two attempts' writes | tasks not terminal |",
  '|---|---|---|---|---|---|---|---|---|---|---|',
);
for (const b of backends) {
  const rs = results.filter((r) => r.options.backend === b && r.tasks);
  const sum = (f: (r: TrialResult) => number) => rs.reduce((s, r) => s + f(r), 0);
  const inv = (name: string) => sum((r) => r.violations.filter((v) => v.invariant === name && v.key?.startsWith('task ')).length);
  out.push(
    `| ${b} | ${sum((r) => r.tasks.submitted)} | ${sum((r) => r.tasks.succeeded)} | ${sum((r) => r.tasks.failed)} | ${sum((r) => r.tasks.attempts)} | ${sum((r) => r.tasks.requeued)} | ${sum((r) => r.tasks.writes)} | ${sum((r) => r.tasks.historyRows)} | ${inv('late-write')} | ${inv('two-attempts')} | ${sum((r) => r.unsettled.filter((u) => u.startsWith('task ')).length)} |`,
  );
}
out.push('', '| backend | processor behaviours (invocations) |', '|---|---|');
for (const b of backends) {
  const total: Record<string, number> = {};
  for (const r of results.filter((x) => x.options.backend === b)) for (const [k, n] of Object.entries(r.behaviours)) total[k] = (total[k] ?? 0) + n;
  out.push(
    `| ${b} | ${Object.entries(total)
      .sort()
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')} |`,
  );
}
const bad = results.filter((r) => r.violations.length > 0 || !r.drained);
if (bad.length > 0) {
  out.push('', '| backend | seed | finding | detail |', '|---|---|---|---|');
  for (const r of bad) {
    for (const v of r.violations) out.push(`| ${r.options.backend} | ${r.options.seed} | ${v.invariant} (safety) | ${v.key ?? ''} ${v.detail} |`);
    if (!r.drained)
      out.push(
        `| ${r.options.backend} | ${r.options.seed} | drain timeout (liveness) | unsettled ${r.unsettled.join(', ')}; faults ${r.faults.map((f) => `${f.kind}@${f.at}`).join(', ')} |`,
      );
  }
}
process.stdout.write(`${out.join('\n')}\n`);
