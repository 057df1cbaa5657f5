/**
 * worker-start (issues 12 and 15): the CPU a task worker process spends from fork to 'ready' with
 * a TypeScript tasks module (bench/fixtures/tasks.ts), loaded through tsx in the process (as
 * before) or from the JavaScript the host compiled (src/child/user-modules.ts); the two
 * alternate, R rounds of 4 processes each. Printed: CPU seconds per process (from /proc, Linux
 * only) and the time until all 4 are ready. Self-contained: `npx tsx bench/suites/worker-start.ts
 * sqlite|mysql [R]` (default 3); nothing is asserted or written.
 */
import { createLogger } from '../../src/logging.ts';
import { AttemptPool } from '../../src/tasks/attempt-pool.ts';
import { parseTaskConfig } from '../../src/tasks/config.ts';
import { loadTaskRegistry } from '../../src/tasks/load.ts';
import { openBenchDatabase } from '../lib/fixture.ts';
import { cpuSeconds } from '../lib/proc-cpu.ts';
import { sleep } from '../lib/runtime-host.ts';
import { BENCH_TASKS_MODULE } from '../lib/task-worker.ts';

const backend = process.argv[2];
const rounds = Number(process.argv[3] ?? 3);
if ((backend !== 'sqlite' && backend !== 'mysql') || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: npx tsx bench/suites/worker-start.ts sqlite|mysql [rounds >= 1]');
  process.exit(2);
}

const fx = await openBenchDatabase(backend);
const config = { ...parseTaskConfig({ POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_CAPACITY: '4' }), tasksModule: BENCH_TASKS_MODULE };
const registry = await loadTaskRegistry(BENCH_TASKS_MODULE);
const logger = createLogger({ level: 'silent' });

async function start(compiled: boolean): Promise<{ cpu: number[]; readyMs: number }> {
  const pool = new AttemptPool(config, fx.db.url, logger);
  if (compiled) await pool.prepare([BENCH_TASKS_MODULE, ...registry.moduleFiles()]);
  const t0 = performance.now();
  pool.want(4);
  while (pool.readyIdle() < 4) await sleep(5);
  const readyMs = performance.now() - t0;
  const cpu = pool.pids().map(cpuSeconds);
  await pool.close();
  return { cpu, readyMs };
}

for (let r = 0; r < rounds; r += 1) {
  for (const compiled of [false, true]) {
    const { cpu, readyMs } = await start(compiled);
    const mean = cpu.reduce((a, b) => a + b, 0) / cpu.length;
    console.log(
      `${backend}, ${compiled ? 'compiled by the host' : 'through tsx         '}: CPU s per process ${mean.toFixed(2)} (${cpu.map((c) => c.toFixed(2)).join(' ')}); 4 ready in ${readyMs.toFixed(0)} ms`,
    );
  }
}
await fx.close();
process.exit(0);
