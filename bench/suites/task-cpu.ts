/**
 * task-cpu (issue 12): where a durable no-op task's CPU goes. `apsup tasks worker` (capacity 4)
 * drains N tasks submitted in one transaction after a warm-up; printed: tasks/s from the first
 * claim to the last completion (database clock) and the CPU per task (from /proc, Linux only) of
 * the worker host, of its task worker processes and, on MySQL, of the local mariadbd/mysqld.
 * Self-contained: `npx tsx bench/suites/task-cpu.ts sqlite|mysql [N]` (default 5000). Run it on a
 * quiet machine and interleave it with the same probe of another commit (a second worktree) to
 * compare; nothing is asserted or written.
 */
import { openBenchDatabase } from '../lib/fixture.ts';
import { childPids, cpuSeconds, databaseServerPid } from '../lib/proc-cpu.ts';
import { sleep } from '../lib/runtime-host.ts';
import { claimToCompletionSeconds, prepareOurTasks, startTaskWorker, stopTaskWorker, submitNoopBacklog, waitTasksDone } from '../lib/task-worker.ts';

const backend = process.argv[2];
const n = Number(process.argv[3] ?? 5000);
if ((backend !== 'sqlite' && backend !== 'mysql') || !Number.isInteger(n) || n < 100) {
  console.error('usage: npx tsx bench/suites/task-cpu.ts sqlite|mysql [N >= 100]');
  process.exit(2);
}

const fx = await openBenchDatabase(backend);
const ours = await prepareOurTasks(fx, 4, 'NORMAL');
const host = startTaskWorker(ours, 'task-cpu');
await sleep(3000);
const warm = await submitNoopBacklog(ours, 20); // the pool's processes are started and warm
await waitTasksDone(ours, warm[0]!, warm.at(-1)!, 60_000, host);
const server = backend === 'mysql' ? databaseServerPid() : 0;
const workers = childPids(host.pid!);
const sample = () => ({ host: cpuSeconds(host.pid!), workers: workers.reduce((sum, p) => sum + cpuSeconds(p), 0), server: server ? cpuSeconds(server) : 0 });
const ids = await submitNoopBacklog(ours, n);
const before = sample();
await waitTasksDone(ours, ids[0]!, ids.at(-1)!, 600_000, host);
const after = sample();
const seconds = await claimToCompletionSeconds(ours, ids[0]!, ids.at(-1)!);
const per = (k: keyof typeof before) => (((after[k] - before[k]) / n) * 1000).toFixed(3);
console.log(
  `${backend}, ${n} no-op tasks, capacity 4: ${(n / seconds).toFixed(0)} tasks/s; CPU ms per task: host ${per('host')}, ` +
    `task worker processes ${per('workers')}${server ? `, database server ${per('server')}` : ''}`,
);
await stopTaskWorker(host);
await fx.close(); // drops the benchmark database
process.exit(0);
