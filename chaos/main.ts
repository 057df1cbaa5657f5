/**
 * `npm run chaos -- [--backend sqlite|mysql|both] [--trials N] [--seconds S] [--seed X]
 *  [--drain S] [--drain-max S] [--misbehave P] [--scopes N] [--task-rate P] [--kinds k1,k2] [--no-faults] [--no-crash-points] [--out FILE]`
 * The fault-injection suite of issue #10: trials of real processes under random faults, each
 * checked against the invariants (chaos/checker.ts). Each trial prints its seed; --seed replays
 * it. Exit 1 when a safety violation was found, 2 when only drains timed out (liveness).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { killAll } from './procs.ts';
import { runTrial, type TrialResult } from './trial.ts';

// Interrupted: the candidates run in their own process groups, end them too.
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: 'both' },
    trials: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '8' },
    seed: { type: 'string' },
    drain: { type: 'string', default: '30' },
    'drain-max': { type: 'string' },
    misbehave: { type: 'string', default: '0.3' },
    scopes: { type: 'string', default: '4' },
    'task-rate': { type: 'string', default: '0.06' },
    kinds: { type: 'string' },
    'no-faults': { type: 'boolean', default: false },
    'no-crash-points': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});

function positive(name: string, raw: string, integer = true): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n)))
    throw new Error(`--${name} must be a ${integer ? 'non-negative integer' : 'non-negative number'}, got ${JSON.stringify(raw)}`);
  return n;
}

const backends = values.backend === 'both' ? (['sqlite', 'mysql'] as const) : [values.backend];
for (const b of backends) if (b !== 'sqlite' && b !== 'mysql') throw new Error(`--backend must be sqlite, mysql or both, got ${JSON.stringify(b)}`);
const trials = positive('trials', values.trials!);
const base = values.seed ?? crypto.randomBytes(4).toString('hex');
const results: TrialResult[] = [];
const say = (line: string) => process.stdout.write(`${line}\n`);

for (const backend of backends as Array<'sqlite' | 'mysql'>) {
  for (let i = 1; i <= trials; i += 1) {
    const seed = values.seed ?? `${base}-${i}`;
    const started = Date.now();
    const r = await runTrial(
      {
        backend,
        seed,
        seconds: positive('seconds', values.seconds!, false),
        drainSeconds: positive('drain', values.drain!, false),
        drainMaxSeconds: values['drain-max'] === undefined ? undefined : positive('drain-max', values['drain-max'], false),
        misbehave: positive('misbehave', values.misbehave!, false),
        scopes: Math.max(1, positive('scopes', values.scopes!)),
        kinds: values.kinds
          ? values.kinds
              .split(',')
              .map((k) => k.trim())
              .filter(Boolean)
          : undefined,
        taskRate: Math.min(1, positive('task-rate', values['task-rate']!, false)),
        faults: !values['no-faults'],
        crashPoints: !values['no-crash-points'],
      },
      say,
    );
    results.push(r);
    const kinds = r.faults.reduce<Record<string, number>>((m, f) => ({ ...m, [f.kind]: (m[f.kind] ?? 0) + 1 }), {});
    say(
      `trial ${backend} seed=${seed} ${((Date.now() - started) / 1000).toFixed(1)}s inputs=${r.driver.inputs} requests=${r.driver.requests} invocations=${r.invocations} outputs=${r.check.outputs} lease-history=${r.check.historyRows} past-expiry=${r.check.writesPastExpiry} faults=${JSON.stringify(kinds)} tasks=${r.tasks.submitted}/${r.tasks.succeeded}ok/${r.tasks.failed}failed attempts=${r.tasks.attempts} requeued=${r.tasks.requeued} task-writes=${r.tasks.writes} crash-points-hit=${JSON.stringify(r.crashHits)} drained=${r.drained} (${r.drainMs} ms, longest stall ${r.drainStallMs} ms) violations=${r.violations.length}`,
    );
    for (const v of r.violations) say(`  VIOLATION ${v.invariant} ${v.key ?? ''}: ${v.detail}\n    rows: ${JSON.stringify(v.rows ?? [])}`);
    if (values.out) fs.writeFileSync(values.out, JSON.stringify(results, null, 1));
    if (r.violations.length > 0 || !r.drained)
      say(`  fault schedule (ms from start): ${JSON.stringify(r.faults.map((f) => ({ at: f.at, kind: f.kind, pid: f.pid, detail: f.detail })))}`);
  }
}

const safety = results.reduce((n, r) => n + r.violations.length, 0);
const liveness = results.filter((r) => !r.drained).length;
say(`chaos: ${results.length} trials, ${safety} safety violations, ${liveness} drain timeouts (base seed ${base})`);
process.exit(safety > 0 ? 1 : liveness > 0 ? 2 : 0);
