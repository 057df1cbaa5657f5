/**
 * npm run bench -- <suite> [--backend sqlite|mysql] [--scopes N[,N...]] [--workers W] [--repeat R] ...
 * Figures are printed and written to bench/results/; nothing here is asserted.
 */
import { parseArgs } from 'node:util';
import type { Backend } from '../src/store/types.ts';
import { runScanSuite } from './suites/scan.ts';
import { runFenceSuite } from './suites/fence.ts';
import { runDispatchSuite } from './suites/dispatch.ts';
import { runPeerSuite } from './suites/peer.ts';
import { runLatencySuite } from './suites/latency.ts';
import { runFailoverSuite } from './suites/failover.ts';
import { runIdleSuite } from './suites/idle.ts';
import { runFloorSuite } from './suites/floor.ts';
import { runAll } from './suites/all.ts';
import { runAdoptSuite } from './suites/adopt.ts';

const USAGE = `usage: npm run bench -- <suite> [options]
suites:
  scan      admitted scopes/s of one automatic scan over N dirty scopes, peak RSS; SVG chart of
            throughput against backlog size next to the raw JSON
  fence     fenced vs unfenced business commits/s with W concurrent worker processes
  floor     the same transaction shapes without the supervisor (single-row, fenced single-row,
            500-row page updates); scan and fence as fractions of them (latest results)
  dispatch  end-to-end no-op invocations/s (W workers in 1 family, and in 4 families), with
            graphile-worker on the local PostgreSQL at the same concurrency (suite peer)
  peer      graphile-worker alone
  latency   explicit trigger to worker start, p50/p95/p99 (SQLite in-process and from another
            process; MySQL from an api process and in-process)
  failover  MySQL: SIGKILL of the leader until the new leader's first invocation
  idle      SQL statements of an idle host with one interval family (300 s)
  adopt     maintenance window of the Topic Memory PR #1490 adoption at N legacy scopes
            (preflight alone, whole adoption; --scopes, default 10000,100000)
  all       every suite, sized for about 10 minutes on 2 cores; prints the targets table
options:
  --backend sqlite|mysql   one backend (default: both)
  --repeat R               repetitions, the median is printed (default 3)
  --scopes N[,N...]        scan: backlog sizes (default SQLite 10000,100000,1000000; MySQL 10000,100000)
                           dispatch/peer: invocations (default 5000; all: 3000, or --invocations)
  --invocations N          dispatch invocations in all
  --workers W              fence/floor: concurrent workers (default 8); dispatch/peer: worker
                           budget (default 4); latency: worker budget (default 4)
  --page P                 scan page size (default 500)
  --duration MS            fence/floor measuring window per repetition (default 2000)
  --no-peer                dispatch without graphile-worker
  --triggers N             latency: triggers per path (default 2000; all: 400)
  --gap MS                 latency: pace of the triggers (default 40, open loop)
  --poll S                 latency: MySQL POLL_SECONDS of the background runtime (default 5)
  --ttl S --renew S        failover: lease TTL and renewal period (default 5 and 1)
  --window S               idle: measuring window (default 60; all: 20)
environment: APSUP_TEST_MYSQL_URL (default mysql://root@127.0.0.1:3306/test),
             APSUP_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/test),
             APSUP_BENCH_CPU_PROF=<dir> (V8 CPU profile of every runtime host child),
             APSUP_BENCH_DISPATCH_COUNT=1 (dispatch: SQL statements of the host per invocation)`;

const SCAN_SIZES: Record<Backend, number[]> = { sqlite: [10_000, 100_000, 1_000_000], mysql: [10_000, 100_000] };
const DISPATCH_DEFAULT = 5_000;
const ALL_DISPATCH_DEFAULT = 3_000;
const ALL_TRIGGERS_DEFAULT = 400;
const ALL_IDLE_WINDOW = 20;

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      backend: { type: 'string' },
      scopes: { type: 'string' },
      repeat: { type: 'string', default: '3' },
      page: { type: 'string', default: '500' },
      workers: { type: 'string' },
      duration: { type: 'string', default: '2000' },
      'no-peer': { type: 'boolean', default: false },
      triggers: { type: 'string' },
      gap: { type: 'string', default: '40' },
      poll: { type: 'string' },
      ttl: { type: 'string', default: '5' },
      window: { type: 'string' },
      invocations: { type: 'string' },
      renew: { type: 'string', default: '1' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const suite = positionals[0];
  if (values.help || !suite) {
    console.log(USAGE);
    return suite ? 0 : 2;
  }
  const backends: Backend[] = values.backend ? [values.backend as Backend] : ['sqlite', 'mysql'];
  if (!backends.every((b) => b === 'sqlite' || b === 'mysql')) {
    console.error('--backend must be sqlite or mysql');
    return 2;
  }
  const repeat = Number(values.repeat);
  const page = Number(values.page);
  const parsedScopes = values.scopes?.split(',').map((s) => Number(s.trim()));
  if (parsedScopes && !parsedScopes.every((n) => Number.isInteger(n) && n > 0)) {
    console.error('--scopes must be positive integers');
    return 2;
  }
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  const invocations = values.invocations ? Number(values.invocations) : parsedScopes ? Math.max(...parsedScopes) : DISPATCH_DEFAULT;
  switch (suite) {
    case 'scan': {
      const sizes = { sqlite: parsedScopes ?? SCAN_SIZES.sqlite, mysql: parsedScopes ?? SCAN_SIZES.mysql };
      await runScanSuite({ backends, sizes, repeat, pageSize: page });
      return 0;
    }
    case 'fence':
      await runFenceSuite({ backends, workers: workers ?? 8, repeat, durationMs: Number(values.duration) });
      return 0;
    case 'dispatch':
      await runDispatchSuite({ backends, invocations, workers: workers ?? 4, repeat, familyCounts: [1, 4], peer: !values['no-peer'] });
      return 0;
    case 'peer':
      await runPeerSuite({ jobs: invocations, workers: workers ?? 4, repeat });
      return 0;
    case 'latency':
      await runLatencySuite({ backends, triggers: Number(values.triggers ?? 2000), gapMs: Number(values.gap), workers: workers ?? 4, pollSeconds: values.poll ? Number(values.poll) : undefined });
      return 0;
    case 'failover':
      await runFailoverSuite({ ttlSeconds: Number(values.ttl), renewSeconds: Number(values.renew), repeat, backlog: 50_000 });
      return 0;
    case 'idle':
      await runIdleSuite({ backends, windowSeconds: Number(values.window ?? 60), settleSeconds: 3 });
      return 0;
    case 'adopt':
      await runAdoptSuite({ backends, sizes: parsedScopes ?? [10_000, 100_000], repeat });
      return 0;
    case 'floor':
      await runFloorSuite({ backends, workers: workers ?? 8, repeat, durationMs: Number(values.duration), pageRows: 100_000, pageSize: page });
      return 0;
    case 'all':
      await runAll({
        backends,
        scanSizes: { sqlite: parsedScopes ?? SCAN_SIZES.sqlite, mysql: parsedScopes ?? SCAN_SIZES.mysql },
        repeat,
        pageSize: page,
        fenceWorkers: workers ?? 8,
        durationMs: Number(values.duration),
        invocations: values.invocations ? Number(values.invocations) : ALL_DISPATCH_DEFAULT,
        dispatchWorkers: 4,
        triggers: Number(values.triggers ?? ALL_TRIGGERS_DEFAULT),
        gapMs: Number(values.gap),
        ttlSeconds: Number(values.ttl),
        renewSeconds: Number(values.renew),
        idleWindowSeconds: Number(values.window ?? ALL_IDLE_WINDOW),
      });
      return 0;
    default:
      console.error(`unknown suite ${JSON.stringify(suite)}\n${USAGE}`);
      return 2;
  }
}

main().then((code) => { process.exitCode = code; }, (error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
