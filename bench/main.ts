/**
 * npm run bench -- <suite> [--backend sqlite|mysql] [--scopes N[,N...]] [--workers W] [--repeat R] ...
 * Figures are printed and written to bench/results/ (or APSUP_BENCH_RESULTS_DIR); nothing here is
 * asserted. A flag that a suite cannot honour is refused, never silently ignored.
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
import { runAll, ALL_DEFAULTS } from './suites/all.ts';
import { runAdoptSuite } from './suites/adopt.ts';
import { runTasksSuite } from './suites/tasks.ts';
import { parseSynchronousList } from './lib/durability.ts';
import { BENCH_FAMILY_NAMES } from './fixtures/families.ts';

const TASKS_DEFAULT = 100;
const TASKS_TRIGGERS = 20;
const TASKS_GAP_MS = 500;

const USAGE = `usage: npm run bench -- <suite> [options]
suites:
  scan      admitted scopes/s of one automatic scan over N dirty scopes, in a separate scanning
            process whose peak RSS is reported; SVG chart of throughput against backlog size
            (bench/results/scan-<time>.svg and bench/results/scan-latest.svg)
  fence     fenced vs unfenced business commits/s with W concurrent worker processes
  floor     the same transaction shapes without the supervisor (single-row, fenced single-row,
            500-row page updates, IPC + fenced-commit round trips); scan, fence and dispatch as
            fractions of them (latest results)
  dispatch  end-to-end no-op invocations/s (W workers in 1 family, and 4 families), interleaved
            with graphile-worker and pg-boss (local PostgreSQL) and BullMQ (local Redis) at the
            same concurrency; each system's durability setting next to its figure
  tasks     durable no-op tasks through \`apsup tasks worker\` (capacity W): tasks/s from the first
            claim to the last completion, submits/s (one call per task) and submit->handler start
            p50/p95/p99, interleaved with graphile-worker, pg-boss and BullMQ on the same work
  peer      graphile-worker alone
  latency   explicit trigger to worker start, p50/p95/p99 (SQLite in-process and from another
            process; MySQL from an api process and in-process)
  failover  MySQL only: SIGKILL of the leader until the new leader's first invocation
  idle      SQL statements of an idle host with one interval family (300 s)
  adopt     maintenance window of the Topic Memory PR #1490 adoption at N legacy scopes
  all       every suite with smaller sizes (under 10 minutes on 2 cores); ends with the targets table
options (a suite refuses an option it cannot honour):
  --backend sqlite|mysql  one backend (default: both). Not peer (PostgreSQL); failover: mysql only
  --repeat R              repetitions, medians printed (default 3): every suite; latency: rounds of
                          triggers; idle: consecutive windows
  --scopes N[,N...]       scan: backlog sizes (default SQLite 10000,100000,1000000; MySQL 10000,100000)
                          adopt: legacy scopes (default 10000,100000); all: the scan sizes
                          dispatch, peer: invocations (default 50000); floor: rows of the page tables
                          (default 100000); failover: owed requests (default 50000)
  --workers W             fence: worker processes (default 8); floor: processes of every shape
                          (default 8 for commits, 4 for round trips); dispatch, peer, latency:
                          worker budget (default 4); failover: budget per candidate (default 2);
                          all: every one of these
  --invocations N         dispatch, peer: the same as --scopes N; all: dispatch invocations (default ${ALL_DEFAULTS.invocations});
                          tasks: no-op tasks per repetition (default ${TASKS_DEFAULT})
  --no-peer               dispatch, tasks (and all) without the peer queues
  --families F[,F...]     dispatch: shapes to run, as families sharing the worker budget (default 1,4)
  --sqlite-synchronous L  dispatch, tasks: SQLite PRAGMA synchronous settings to run, e.g. NORMAL,FULL
                          (POWERCONTEXT_SERVER_RUNTIME_SQLITE_SYNCHRONOUS of the runtime; default NORMAL)
  --page P                scan, floor: page size (default 500, the runtime's SCAN_PAGE_SIZE)
  --duration MS           fence, floor: measuring window per repetition (default 2000)
  --triggers N            latency: triggers per round (default 2000; all: ${ALL_DEFAULTS.triggers}); tasks: latency
                          submits per repetition (default ${TASKS_TRIGGERS})
  --gap MS                latency: pace of the triggers (default 40, open loop); tasks: (default ${TASKS_GAP_MS})
  --poll S                latency: MySQL POLL_SECONDS of the background runtime (default 5)
  --ttl S --renew S       failover: lease TTL and renewal period (default 5 and 1)
  --window S              idle: length of one window (default 60; all: ${ALL_DEFAULTS.idleWindowSeconds})
environment: APSUP_TEST_MYSQL_URL (default mysql://root@127.0.0.1:3306/test),
             APSUP_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/test),
             APSUP_BENCH_RESULTS_DIR=<dir> (raw results and charts there instead of bench/results),
             APSUP_BENCH_CPU_PROF=<dir> (V8 CPU profile of every runtime and task worker host child),
             APSUP_BENCH_DISPATCH_COUNT=1 (dispatch: SQL statements of the host per invocation)`;

const SCAN_SIZES: Record<Backend, number[]> = { sqlite: [10_000, 100_000, 1_000_000], mysql: [10_000, 100_000] };
const DISPATCH_DEFAULT = 50_000;
const FAILOVER_BACKLOG = 50_000;
const FLOOR_ROWS = 100_000;

type Flag =
  | 'backend'
  | 'families'
  | 'scopes'
  | 'repeat'
  | 'page'
  | 'workers'
  | 'duration'
  | 'no-peer'
  | 'triggers'
  | 'gap'
  | 'poll'
  | 'ttl'
  | 'renew'
  | 'window'
  | 'invocations'
  | 'sqlite-synchronous';

/** The flags each suite honours; the others are refused. */
const HONOURS: Record<string, Flag[]> = {
  scan: ['backend', 'scopes', 'repeat', 'page'],
  fence: ['backend', 'workers', 'repeat', 'duration'],
  floor: ['backend', 'scopes', 'workers', 'repeat', 'duration', 'page'],
  dispatch: ['backend', 'scopes', 'invocations', 'workers', 'repeat', 'no-peer', 'sqlite-synchronous', 'families'],
  tasks: ['backend', 'invocations', 'workers', 'repeat', 'no-peer', 'triggers', 'gap', 'sqlite-synchronous'],
  peer: ['scopes', 'invocations', 'workers', 'repeat'],
  latency: ['backend', 'workers', 'repeat', 'triggers', 'gap', 'poll'],
  failover: ['backend', 'scopes', 'workers', 'repeat', 'ttl', 'renew'],
  idle: ['backend', 'repeat', 'window'],
  adopt: ['backend', 'scopes', 'repeat'],
  all: ['backend', 'scopes', 'repeat', 'page', 'workers', 'duration', 'no-peer', 'triggers', 'gap', 'poll', 'ttl', 'renew', 'window', 'invocations'],
};

const WHY_NOT: Record<string, string> = {
  'scan workers': 'a scan runs in one supervisor process, without workers',
  'scan duration': 'a scan runs until the backlog is exhausted',
  'fence scopes': 'every fence worker commits to its own row; there is no backlog',
  'fence page': 'fence commits single rows',
  'latency scopes': 'every trigger is a scope of its own; the number of triggers is --triggers',
  'idle scopes': 'the idle host has no backlog',
  'idle workers': 'no worker runs while the host is idle',
  'peer backend': 'graphile-worker runs on PostgreSQL (APSUP_BENCH_PG_URL)',
  'adopt workers': 'the adoption runs in one process',
  'tasks scopes': 'tasks have no scopes; the number of tasks is --invocations',
};

function fail(message: string): number {
  console.error(`${message}\n(npm run bench -- --help lists every suite and option)`);
  return 2;
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      backend: { type: 'string' },
      scopes: { type: 'string' },
      repeat: { type: 'string' },
      page: { type: 'string' },
      workers: { type: 'string' },
      duration: { type: 'string' },
      'no-peer': { type: 'boolean' },
      triggers: { type: 'string' },
      gap: { type: 'string' },
      poll: { type: 'string' },
      ttl: { type: 'string' },
      window: { type: 'string' },
      invocations: { type: 'string' },
      renew: { type: 'string' },
      'sqlite-synchronous': { type: 'string' },
      families: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const suite = positionals[0];
  if (values.help || !suite) {
    console.log(USAGE);
    return suite || values.help ? 0 : 2;
  }
  if (positionals.length > 1) return fail(`one suite at a time (got ${positionals.join(', ')})`);
  const honours = HONOURS[suite];
  if (!honours) return fail(`unknown suite ${JSON.stringify(suite)}`);
  for (const flag of Object.keys(values) as Array<Flag | 'help'>) {
    if (flag === 'help' || values[flag] === undefined || honours.includes(flag)) continue;
    return fail(`${suite}: --${flag} does not apply (${WHY_NOT[`${suite} ${flag}`] ?? `${suite} has no use for it`})`);
  }

  const positive = (name: Flag, fallback: number, allowZero = false): number => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0)) throw new UsageError(`--${name} must be a positive number (got ${JSON.stringify(raw)})`);
    return n;
  };
  const integer = (name: Flag, fallback: number): number => {
    const n = positive(name, fallback);
    if (!Number.isInteger(n)) throw new UsageError(`--${name} must be an integer (got ${JSON.stringify(values[name])})`);
    return n;
  };

  const backends: Backend[] = values.backend ? [values.backend as Backend] : ['sqlite', 'mysql'];
  if (!backends.every((b) => b === 'sqlite' || b === 'mysql')) return fail('--backend must be sqlite or mysql');
  const repeat = integer('repeat', 3);
  const page = integer('page', 500);
  const duration = positive('duration', 2000);
  const gap = positive('gap', 40, true);
  const ttl = positive('ttl', 5);
  const renew = positive('renew', 1);
  const parsedScopes = values.scopes?.split(',').map((s) => Number(s.trim()));
  if (parsedScopes && !parsedScopes.every((n) => Number.isInteger(n) && n > 0)) return fail('--scopes must be positive integers');
  const oneScopes = (what: string): number | undefined => {
    if (!parsedScopes) return undefined;
    if (parsedScopes.length > 1) throw new UsageError(`${suite}: --scopes takes one number here (${what})`);
    return parsedScopes[0];
  };
  const workers = values.workers === undefined ? undefined : integer('workers', 1);
  if (values.invocations !== undefined && parsedScopes && suite !== 'all') return fail(`${suite}: give --scopes or --invocations, not both`);
  const invocations = values.invocations !== undefined ? integer('invocations', 1) : undefined;
  let synchronous;
  try {
    synchronous = parseSynchronousList(values['sqlite-synchronous']);
  } catch {
    return fail(`--sqlite-synchronous must be NORMAL, FULL or NORMAL,FULL (got ${JSON.stringify(values['sqlite-synchronous'])})`);
  }

  switch (suite) {
    case 'scan': {
      const sizes = { sqlite: parsedScopes ?? SCAN_SIZES.sqlite, mysql: parsedScopes ?? SCAN_SIZES.mysql };
      await runScanSuite({ backends, sizes, repeat, pageSize: page });
      return 0;
    }
    case 'fence':
      await runFenceSuite({ backends, workers: workers ?? 8, repeat, durationMs: duration });
      return 0;
    case 'dispatch':
      await runDispatchSuite({
        backends,
        invocations: invocations ?? oneScopes('invocations') ?? DISPATCH_DEFAULT,
        workers: workers ?? 4,
        repeat,
        familyCounts: parseFamilies(values.families),
        peer: !values['no-peer'],
        synchronous,
      });
      return 0;
    case 'tasks':
      await runTasksSuite({
        backends,
        tasks: invocations ?? TASKS_DEFAULT,
        workers: workers ?? 4,
        repeat,
        peer: !values['no-peer'],
        triggers: integer('triggers', TASKS_TRIGGERS),
        gapMs: values.gap === undefined ? TASKS_GAP_MS : gap,
        synchronous,
      });
      return 0;
    case 'peer':
      await runPeerSuite({ jobs: invocations ?? oneScopes('jobs') ?? DISPATCH_DEFAULT, workers: workers ?? 4, repeat });
      return 0;
    case 'latency':
      await runLatencySuite({
        backends,
        triggers: integer('triggers', 2000),
        gapMs: gap,
        workers: workers ?? 4,
        repeat,
        pollSeconds: values.poll === undefined ? undefined : positive('poll', 5),
      });
      return 0;
    case 'failover':
      if (values.backend === 'sqlite')
        return fail(
          'failover: --backend sqlite does not apply (a SQLite database has one runtime host holding a permanent term: there is no second candidate to fail over to); run it with --backend mysql or without --backend',
        );
      await runFailoverSuite({ ttlSeconds: ttl, renewSeconds: renew, repeat, backlog: oneScopes('owed requests') ?? FAILOVER_BACKLOG, workers: workers ?? 2 });
      return 0;
    case 'idle':
      await runIdleSuite({ backends, windowSeconds: positive('window', 60), settleSeconds: 3, repeat });
      return 0;
    case 'adopt':
      await runAdoptSuite({ backends, sizes: parsedScopes ?? [10_000, 100_000], repeat });
      return 0;
    case 'floor':
      await runFloorSuite({
        backends,
        workers: workers ?? 8,
        dispatchWorkers: workers ?? 4,
        repeat,
        durationMs: duration,
        pageRows: oneScopes('rows of the page tables') ?? FLOOR_ROWS,
        pageSize: page,
      });
      return 0;
    case 'all':
      await runAll({
        backends,
        scanSizes: { sqlite: parsedScopes ?? SCAN_SIZES.sqlite, mysql: parsedScopes ?? SCAN_SIZES.mysql },
        repeat,
        pageSize: page,
        fenceWorkers: workers ?? 8,
        dispatchWorkers: workers ?? 4,
        latencyWorkers: workers ?? 4,
        failoverWorkers: workers ?? 2,
        floorRows: FLOOR_ROWS,
        durationMs: duration,
        invocations: invocations ?? ALL_DEFAULTS.invocations,
        peer: !values['no-peer'],
        triggers: integer('triggers', ALL_DEFAULTS.triggers),
        gapMs: gap,
        pollSeconds: values.poll === undefined ? undefined : positive('poll', 5),
        ttlSeconds: ttl,
        renewSeconds: renew,
        failoverBacklog: FAILOVER_BACKLOG,
        idleWindowSeconds: positive('window', ALL_DEFAULTS.idleWindowSeconds),
        defaultsUsed: {
          invocations: invocations === undefined,
          triggers: values.triggers === undefined,
          idleWindowSeconds: values.window === undefined,
        },
      });
      return 0;
    default:
      return fail(`unknown suite ${JSON.stringify(suite)}`);
  }
}

class UsageError extends Error {}

/** --families: the dispatch shapes, as family counts (default 1 and 4). */
function parseFamilies(raw: string | undefined): number[] {
  if (raw === undefined) return [1, 4];
  const counts = raw.split(',').map(Number);
  if (!counts.every((n) => Number.isInteger(n) && n >= 1 && n <= BENCH_FAMILY_NAMES.length))
    throw new UsageError(`--families must be integers 1..${BENCH_FAMILY_NAMES.length}, e.g. 1,4 (got ${JSON.stringify(raw)})`);
  return counts;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.exitCode = fail(error.message);
      return;
    }
    console.error(error);
    process.exitCode = 1;
  },
);
