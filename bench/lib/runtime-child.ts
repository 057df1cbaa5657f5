/**
 * A benchmark runtime host process. Environment: POWERCONTEXT_SERVER_RUNTIME_* as for apsup run
 * (database URL, role, tuning) and the bench families module's APSUP_BENCH_* variables;
 * APSUP_BENCH_COUNT_SQL=1 counts every SQL statement this process executes (not its workers');
 * APSUP_BENCH_HOST=apsup-run runs the whole `apsup run` host (supervisors and the durable task
 * runner, via runUntilSignal) instead of the supervisor Runtime alone.
 * IPC (each request carries an id that its reply repeats):
 *   start [expect N]      -> started {t, counting} builds and starts the runtime; with expect, counts
 *                                               every worker outcome in this process (the partitions'
 *                                               onInvocation hook: a counter, no SQL) and pushes
 *                                               mark {what: 'tenth'|'done', n, t} (no id) when the
 *                                               count reaches ceil(N/10) and N
 *   trigger family scope  -> triggered {t0, t1} runtime.trigger (the in-process API path)
 *   counts                -> counts {...}       statements executed so far
 *   status                -> status {...}       runtime.status()
 *   stop                  -> stopped            graceful stop, then the process exits
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installStatementCounters, statementCounts } from './count-statements.ts';

if (process.env.APSUP_BENCH_COUNT_SQL === '1') installStatementCounters();

const FAMILIES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'families.ts');
const { loadFamilies } = await import('../../src/registry/load.ts');
const { parseRuntimeConfig } = await import('../../src/config/runtime-config.ts');
const { Runtime } = await import('../../src/runtime/runtime.ts');
const { createLogger } = await import('../../src/logging.ts');
const { runUntilSignal } = await import('../../src/cli/run.ts');

type Msg = { id?: number; type: string; family?: string; scope?: string; expect?: number };
type RuntimeInstance = InstanceType<typeof Runtime>;

const logger = createLogger({ name: 'apsup-bench' });
let runtime: RuntimeInstance | null = null;
let hostDone: Promise<number> | null = null;
const now = () => performance.timeOrigin + performance.now();
const reply = (m: Msg, body: Record<string, unknown>) => process.send?.({ id: m.id, ...body });

async function start(): Promise<void> {
  if (process.env.APSUP_BENCH_HOST === 'apsup-run') {
    let started!: () => void;
    const ready = new Promise<void>((r) => {
      started = r;
    });
    hostDone = runUntilSignal({ familiesModule: FAMILIES, logger }, (rt) => {
      runtime = rt;
      started();
    });
    await Promise.race([
      ready,
      hostDone.then((code) => {
        throw new Error(`apsup run ended during start-up (${code})`);
      }),
    ]);
    return;
  }
  const { registrations } = await loadFamilies(FAMILIES);
  runtime = new Runtime(parseRuntimeConfig(process.env, registrations), logger);
}

/** Counts worker outcomes of every partition; false when the runtime exposes no hook. */
function countOutcomes(expect: number): boolean {
  const partitions = (runtime?.supervisors ?? []).flatMap((s) => s.partitions ?? []);
  if (partitions.length === 0 || !partitions.every((p) => 'onInvocation' in p)) return false;
  const tenth = Math.ceil(expect / 10);
  let n = 0;
  for (const p of partitions) {
    const previous = p.onInvocation;
    p.onInvocation = (family, outcome, durationMs) => {
      previous?.(family, outcome, durationMs);
      n += 1;
      if (n === tenth) process.send?.({ type: 'mark', what: 'tenth', n, t: now() });
      if (n === expect) process.send?.({ type: 'mark', what: 'done', n, t: now() });
    };
  }
  return true;
}

process.on('message', (m: Msg) => {
  void (async () => {
    try {
      switch (m.type) {
        case 'start': {
          const t = now();
          await start();
          // apsup-run builds and starts its runtime itself; the plain Runtime is hooked before it starts.
          const counting = m.expect ? countOutcomes(m.expect) : false;
          if (!hostDone) await runtime!.start();
          reply(m, { type: 'started', t, startedMs: now() - t, counting });
          break;
        }
        case 'trigger': {
          const t0 = now();
          await runtime!.trigger(m.family!, m.scope!);
          reply(m, { type: 'triggered', t0, t1: now() });
          break;
        }
        case 'counts':
          reply(m, { type: 'counts', ...statementCounts() });
          break;
        case 'status':
          reply(m, { type: 'status', status: runtime?.status() ?? null });
          break;
        case 'stop':
          if (hostDone) {
            process.kill(process.pid, 'SIGTERM');
            await hostDone;
          } else {
            await runtime?.stop();
          }
          reply(m, { type: 'stopped' });
          setTimeout(() => process.exit(0), 50);
          break;
        default:
          reply(m, { type: 'error', error: `unknown message ${m.type}` });
      }
    } catch (error) {
      reply(m, { type: 'error', error: (error as Error).stack ?? String(error) });
    }
  })();
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready' });
