/**
 * intake (issue 12 item 4): dirty marks/s, explicit requests/s and task submits/s, single calls
 * against the batch forms (pc_aps_mark_dirty_batch, pc_aps_accept_request_batch,
 * pc_task_submit_batch), interleaved per repetition on one fresh database per backend. Single
 * calls run from `--concurrency` loops (each its own transaction, as a domain API would); batches
 * of `--batch` items from the same number of loops. Self-contained: run it with
 * `npx tsx bench/suites/intake.ts [--backend sqlite|mysql] [--items N] [--batch B] [--concurrency C] [--repeat R]`.
 * Figures are printed and written to bench/results/intake-*.json; nothing is asserted.
 */
import { performance } from 'node:perf_hooks';
import { createEphemeralDatabase } from '../../src/devtools/ephemeral-database.ts';
import { openStore } from '../../src/store/open.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import type { Backend } from '../../src/store/types.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { formatNumber, median, machineInfo, printTable, progress, writeResult } from '../lib/report.ts';

interface Options {
  backends: Backend[];
  items: number;
  batch: number;
  concurrency: number;
  repeat: number;
}

function parse(argv: string[]): Options {
  const o: Options = { backends: ['sqlite', 'mysql'], items: 4000, batch: 1000, concurrency: 4, repeat: 3 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--backend') o.backends = [value as Backend];
    else if (flag === '--items') o.items = Number(value);
    else if (flag === '--batch') o.batch = Number(value);
    else if (flag === '--concurrency') o.concurrency = Number(value);
    else if (flag === '--repeat') o.repeat = Number(value);
    else throw new Error(`intake: unknown flag ${flag}`);
  }
  return o;
}

/** Runs `count` units of work from `loops` concurrent loops; returns units per second. */
async function rate(count: number, loops: number, unit: number, work: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: loops }, async () => {
      for (;;) {
        const i = next;
        next += unit;
        if (i >= count) return;
        await work(i);
      }
    }),
  );
  return (count / (performance.now() - started)) * 1000;
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const rows: Array<Array<string | number>> = [];
  const results: Record<string, unknown>[] = [];
  for (const backend of o.backends) {
    const db = await createEphemeralDatabase(backend, { prefix: 'apsup_bench', mysqlAdminUrl: process.env.APSUP_TEST_MYSQL_URL });
    const store = openStore(db.target) as BaseStore;
    const tasks = new TaskStore(store);
    const runs: Record<string, number[]> = {};
    const add = (name: string, v: number) => {
      (runs[name] ??= []).push(v);
    };
    try {
      for (let r = 0; r < o.repeat; r++) {
        progress(`intake ${backend}: repetition ${r + 1}/${o.repeat}`);
        const keys = (tag: string, i: number, n: number) => Array.from({ length: n }, (_, j) => `${tag}-${r}-${i + j}`);
        const single = Math.max(o.concurrency, Math.floor(o.items / 4));
        add('mark dirty, single', await rate(single, o.concurrency, 1, (i) => store.markDirty('bench.single', `s-${r}-${i}`)));
        add(
          'mark dirty, batch',
          await rate(o.items, o.concurrency, o.batch, (i) => store.markDirtyBatch('bench.batch', keys('b', i, Math.min(o.batch, o.items - i)))),
        );
        add('accept request, single', await rate(single, o.concurrency, 1, (i) => store.acceptRequest('bench.single', `s-${r}-${i}`)));
        add(
          'accept request, batch',
          await rate(o.items, o.concurrency, o.batch, (i) => store.acceptRequestBatch('bench.batch', keys('b', i, Math.min(o.batch, o.items - i)))),
        );
        const task = (i: number) => ({
          taskType: 'bench-noop',
          handlerVersion: 1,
          payload: { fileId: `f-${r}-${i}` },
          dedupeKey: `k-${r}-${i}`,
          timeoutMs: 60_000,
        });
        add('task submit, single', await rate(single, o.concurrency, 1, (i) => tasks.submit(task(i))));
        add(
          'task submit, batch',
          await rate(o.items, o.concurrency, o.batch, (i) =>
            tasks.submitBatch(Array.from({ length: Math.min(o.batch, o.items - i) }, (_, j) => task(o.items + i + j))),
          ),
        );
        // Without dedupe keys, behind the pending tasks the runs above left (the keyless read-back, 0029).
        add(
          'task submit, batch, no key',
          await rate(o.items, o.concurrency, o.batch, (i) =>
            tasks.submitBatch(Array.from({ length: Math.min(o.batch, o.items - i) }, (_, j) => ({ ...task(2 * o.items + i + j), dedupeKey: null }))),
          ),
        );
      }
    } finally {
      await store.close();
      await db.drop();
    }
    for (const [name, values] of Object.entries(runs)) {
      rows.push([backend, name, formatNumber(median(values)), values.map((v) => formatNumber(v)).join(' / ')]);
      results.push({ backend, name, perSecondMedian: median(values), runs: values });
    }
  }
  printTable(
    `intake: items/s (batch ${o.batch}, ${o.concurrency} concurrent callers, median of ${o.repeat})`,
    ['backend', 'operation', 'items/s', 'runs'],
    rows,
  );
  const file = writeResult('intake', { options: o, machine: machineInfo(), results });
  console.log(`written ${file}`);
}

await main();
