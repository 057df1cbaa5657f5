/**
 * task-server (issue 12): the MySQL server's CPU per durable task in the runner's group commit,
 * without worker processes or a host: one connection claims, then commits successes in groups
 * of G (pc_task_succeed_batch with G claims in the same call), sequentially, N tasks. Printed:
 * tasks/s and mariadbd/mysqld CPU ms per task (from /proc, Linux only), for each group size.
 * Nothing else runs in the measured loop, so two commits compare well on a noisy machine (run
 * it in two worktrees, interleaved). Self-contained: `npx tsx bench/suites/task-server.ts [N]
 * [G,G,...]` (default 3000 and 1,2,4); nothing is asserted or written.
 */
import { openBenchDatabase } from '../lib/fixture.ts';
import { cpuSeconds, databaseServerPid } from '../lib/proc-cpu.ts';
import { groupCommitLoop, prepareOurTasks, submitNoopBacklog } from '../lib/task-worker.ts';

const n = Number(process.argv[2] ?? 3000);
const groups = (process.argv[3] ?? '1,2,4').split(',').map(Number);
if (!Number.isInteger(n) || n < 100 || groups.some((g) => !Number.isInteger(g) || g < 1 || g > 50)) {
  console.error('usage: npx tsx bench/suites/task-server.ts [N >= 100] [G,G,... each 1..50]');
  process.exit(2);
}

const server = databaseServerPid();
for (const group of groups) {
  const fx = await openBenchDatabase('mysql');
  try {
    const ours = await prepareOurTasks(fx, 4, 'NORMAL');
    await submitNoopBacklog(ours, n + 2 * group);
    const commit = await groupCommitLoop(ours, 'task-server', 60_000, group);
    const c0 = cpuSeconds(server);
    const t0 = performance.now();
    const done = await commit(n);
    const seconds = (performance.now() - t0) / 1000;
    const serverMs = ((cpuSeconds(server) - c0) * 1000) / done;
    console.log(
      `mysql, ${done} no-op tasks, groups of ${group}: ${(done / seconds).toFixed(0)} tasks/s (one connection); server CPU ms per task ${serverMs.toFixed(3)}`,
    );
  } finally {
    await fx.close();
  }
}
