/**
 * success-ab (issue 12): the MySQL server's CPU per durable task in the runner's group commit,
 * comparing procedure texts in one run. One connection claims, then commits successes in groups
 * of G (pc_task_succeed_batch, G claims in the same call) in blocks of B tasks; before each block
 * the texts of one variant are installed (DROP + CREATE), the variants alternate A B B A ..., and
 * each block's mariadbd/mysqld CPU per task is read from /proc (Linux only). Interleaving blocks
 * of seconds cancels the machine's drift, which two separate runs do not. A variant is `base`
 * (the migrated texts) or a directory of `<procedure>.sql` files, each one CREATE PROCEDURE
 * statement (no header needed) replacing the procedure of that name. With APSUP_AB_STATUS=1 the
 * first round also prints the server's status counters per call (statements, handler reads).
 * `npx tsx bench/suites/success-ab.ts G ROUNDS BLOCK base dir [dir ...]`; nothing is asserted.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openBenchDatabase } from '../lib/fixture.ts';
import { cpuSeconds, databaseServerPid } from '../lib/proc-cpu.ts';
import { groupCommitLoop, prepareOurTasks, submitNoopBacklog } from '../lib/task-worker.ts';

const [group, rounds, block] = process.argv.slice(2, 5).map(Number);
const variants = process.argv.slice(5);
if (
  !Number.isInteger(group) ||
  group < 1 ||
  group > 50 ||
  !Number.isInteger(rounds) ||
  rounds < 1 ||
  !Number.isInteger(block) ||
  block < 100 ||
  variants.length === 0
) {
  console.error('usage: npx tsx bench/suites/success-ab.ts G(1..50) ROUNDS BLOCK(>=100) base|DIR [base|DIR ...]');
  process.exit(2);
}
for (const v of variants) {
  if (v !== 'base' && !fs.statSync(v, { throwIfNoEntry: false })?.isDirectory()) {
    console.error(`success-ab: ${v} is neither 'base' nor a directory`);
    process.exit(2);
  }
}

const server = databaseServerPid();
const fx = await openBenchDatabase('mysql');
const NAME = /^pc_[a-z0-9_]+$/;
const texts = (v: string): Record<string, string> =>
  v === 'base'
    ? {}
    : Object.fromEntries(
        fs
          .readdirSync(v)
          .filter((f) => f.endsWith('.sql') && NAME.test(f.slice(0, -4)))
          .map((f) => [f.slice(0, -4), fs.readFileSync(path.join(v, f), 'utf8')]),
      );
const replaced = [...new Set(variants.flatMap((v) => Object.keys(texts(v))))];
const base: Record<string, string> = {};
for (const name of replaced) {
  const rows = await fx.exec(`SHOW CREATE PROCEDURE ${name}`);
  base[name] = String(rows[0]?.['Create Procedure']);
}
async function install(v: string): Promise<void> {
  for (const [name, text] of Object.entries({ ...base, ...texts(v) })) {
    await fx.exec(`DROP PROCEDURE IF EXISTS ${name}`);
    await fx.exec(text);
  }
}
const status = async () => Object.fromEntries((await fx.exec('SHOW GLOBAL STATUS')).map((r) => [String(r.Variable_name), Number(r.Value)]));

try {
  const ours = await prepareOurTasks(fx, 4, 'NORMAL');
  await submitNoopBacklog(ours, rounds * variants.length * block + 4 * group);
  const commit = await groupCommitLoop(ours, 'success-ab', 600_000, group);
  const perTask: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r += 1) {
    for (const v of r % 2 ? [...variants].reverse() : variants) {
      await install(v);
      const s0 = process.env.APSUP_AB_STATUS === '1' && r === 0 ? await status() : null;
      const c0 = cpuSeconds(server);
      const done = await commit(block);
      perTask[v] = [...(perTask[v] ?? []), ((cpuSeconds(server) - c0) * 1000) / done];
      if (s0) {
        const s1 = await status();
        const calls = done / group;
        const moved = Object.keys(s1)
          .filter((k) => /^(Com_(call_procedure|select|update|update_multi|commit)|Handler_|Created_tmp|Executed_triggers|Queries)/.test(k))
          .map((k) => [k, (s1[k]! - (s0[k] ?? 0)) / calls] as const)
          .filter(([, x]) => x >= 0.05);
        console.log(`${v}, per call: ${moved.map(([k, x]) => `${k} ${x.toFixed(2)}`).join(', ')}`);
      }
    }
  }
  for (const [v, xs] of Object.entries(perTask)) {
    const sorted = [...xs].sort((a, b) => a - b);
    console.log(
      `mysql, groups of ${group}, ${v}: server CPU ms per task, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(3)} [${xs.map((x) => x.toFixed(3)).join(' ')}]`,
    );
  }
} finally {
  await fx.close();
}
