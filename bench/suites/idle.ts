/**
 * idle: SQL statements executed by an idle runtime host with one interval family (300 s) and no
 * work, over a window that starts after start-up settled (default 60 s; `all` uses 10 s);
 * --repeat R: R consecutive windows of the same host, the median window is printed.
 * Counted inside the host process by wrapping better-sqlite3 (Statement run/get/all/iterate,
 * Database exec) and mysql2 (Connection query/execute) in the bench child only
 * (bench/lib/count-statements.ts, APSUP_BENCH_COUNT_SQL=1); worker processes are not started
 * while idle. On MariaDB the server's view is printed too: SHOW GLOBAL STATUS deltas of
 * Questions (client statements; a CALL is one) and Queries (also the statements inside
 * procedures), less this suite's own measurement statements; other sessions connected to the
 * server during the window are counted because global counters include their statements.
 * Two hosts: the supervisor Runtime alone, and the whole `apsup run` host (supervisors plus the
 * durable task runner). The SQLite and the MySQL host of one kind run side by side.
 */
import type { ChildProcess } from 'node:child_process';
import mysql from 'mysql2/promise';
import { median, printTable, progress, writeResult } from '../lib/report.ts';
import { openBenchDatabase, type BackendFixtureLike } from '../lib/fixture.ts';
import { call } from '../lib/children.ts';
import { forkRuntime, runtimeEnv, sleep, stopRuntime } from '../lib/runtime-host.ts';
import type { StatementCounts } from '../lib/count-statements.ts';
import type { Backend } from '../../src/store/types.ts';

export interface IdleOptions {
  backends: Backend[];
  windowSeconds: number;
  settleSeconds: number;
  repeat: number;
}

type Host = 'runtime' | 'apsup-run';

export interface IdleRow {
  backend: Backend;
  host: Host;
  windowSeconds: number;
  startupStatements: number;
  /** Median over the windows. */
  statements: number;
  perMinute: number;
  /** Summed over every window. */
  byKind: Record<string, number>;
  /** Median over the windows (MariaDB). */
  server?: ServerCounts;
  windows: Array<{ statements: number; server?: ServerCounts }>;
}

type ServerCounts = { questions: number; queries: number; callProcedure: number; otherSessions: number };

const STATUS_VARS = ['Questions', 'Queries', 'Com_call_procedure'];

async function serverStatus(admin: mysql.Connection): Promise<Record<string, number>> {
  const [rows] = await admin.query(`SHOW GLOBAL STATUS WHERE Variable_name IN (${STATUS_VARS.map(() => '?').join(', ')})`, STATUS_VARS);
  return Object.fromEntries((rows as Array<{ Variable_name: string; Value: string }>).map((r) => [r.Variable_name, Number(r.Value)]));
}

async function otherSessions(admin: mysql.Connection, database: string): Promise<number> {
  const [rows] = await admin.query(
    "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COALESCE(DB, '') <> ? AND COMMAND NOT IN ('Daemon')",
    [database],
  );
  return Number((rows as Array<{ n: number }>)[0].n);
}

async function measure(fx: BackendFixtureLike, host: Host, options: IdleOptions): Promise<IdleRow> {
  const backend = fx.backend;
  let child: ChildProcess | null = null;
  let admin: mysql.Connection | null = null;
  try {
    child = await forkRuntime(
      runtimeEnv(fx.db.url, {
        APSUP_BENCH_FAMILIES: 1,
        APSUP_BENCH_PROCESSOR: 'noop',
        APSUP_BENCH_SCHEDULE_SECONDS: 300,
        APSUP_BENCH_COUNT_SQL: 1,
        APSUP_BENCH_HOST: host,
      }),
      `idle-${backend}-${host}`,
    );
    await call(child, { type: 'start' });
    await sleep(options.settleSeconds * 1000);
    const startup = await call<StatementCounts>(child, { type: 'counts' });
    if (fx.db.target.backend === 'mysql') {
      const t = fx.db.target;
      admin = await mysql.createConnection({ host: t.host, port: t.port, user: t.user, password: t.password });
    }
    const windows: IdleRow['windows'] = [];
    const byKind: Record<string, number> = {};
    let before = startup;
    for (let w = 0; w < options.repeat; w += 1) {
      let serverBefore: Record<string, number> = {};
      let others = 0;
      if (admin && fx.db.target.backend === 'mysql') {
        others = await otherSessions(admin, fx.db.target.database);
        serverBefore = await serverStatus(admin);
      }
      const windowEnd = performance.now() + options.windowSeconds * 1000;
      for (;;) {
        const left = windowEnd - performance.now();
        if (left <= 0) break;
        await sleep(Math.min(left, 10_000));
        if (windowEnd - performance.now() > 1)
          progress(
            `idle ${backend} ${host}: window ${w + 1}/${options.repeat}: ${Math.round((options.windowSeconds * 1000 - (windowEnd - performance.now())) / 1000)} of ${options.windowSeconds} s`,
          );
      }
      let server: ServerCounts | undefined;
      if (admin && fx.db.target.backend === 'mysql') {
        const serverAfter = await serverStatus(admin);
        others = Math.max(others, await otherSessions(admin, fx.db.target.database));
        // Own statements counted between the two reads: the second SHOW GLOBAL STATUS and the
        // PROCESSLIST read before it (the first read counts itself before its value is taken).
        const own = 2;
        server = {
          questions: serverAfter.Questions - serverBefore.Questions - own,
          queries: serverAfter.Queries - serverBefore.Queries - own,
          callProcedure: serverAfter.Com_call_procedure - serverBefore.Com_call_procedure,
          otherSessions: others,
        };
      }
      const after = await call<StatementCounts>(child, { type: 'counts' });
      for (const [k, v] of Object.entries(after.byKind)) {
        const d = v - (before.byKind[k] ?? 0);
        if (d > 0) byKind[k] = (byKind[k] ?? 0) + d;
      }
      windows.push({ statements: after.total - before.total, server });
      progress(`idle ${backend} ${host}: window ${w + 1}/${options.repeat}: ${after.total - before.total} statements in ${options.windowSeconds} s`);
      before = after;
    }
    const statements = median(windows.map((x) => x.statements));
    const servers = windows.map((x) => x.server).filter((x): x is ServerCounts => x !== undefined);
    const server =
      servers.length === 0
        ? undefined
        : {
            questions: median(servers.map((x) => x.questions)),
            queries: median(servers.map((x) => x.queries)),
            callProcedure: median(servers.map((x) => x.callProcedure)),
            otherSessions: Math.max(...servers.map((x) => x.otherSessions)),
          };
    const row: IdleRow = {
      backend,
      host,
      windowSeconds: options.windowSeconds,
      startupStatements: startup.total,
      statements,
      perMinute: (statements / options.windowSeconds) * 60,
      byKind,
      server,
      windows,
    };
    progress(
      `idle ${backend} ${host}: median ${statements} statements per ${options.windowSeconds} s window (${
        Object.entries(byKind)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none'
      } over all windows)`,
    );
    return row;
  } finally {
    await admin?.end().catch(() => undefined);
    if (child) await stopRuntime(child);
  }
}

export async function runIdleSuite(options: IdleOptions): Promise<IdleRow[]> {
  const rows: IdleRow[] = [];
  const fixtures = await Promise.all(options.backends.map((b) => openBenchDatabase(b)));
  try {
    for (const host of ['runtime', 'apsup-run'] as Host[]) {
      progress(
        `idle: ${host} host on ${options.backends.join(' and ')}, ${options.settleSeconds} s settling, then ${options.repeat} window(s) of ${options.windowSeconds} s`,
      );
      rows.push(...(await Promise.all(fixtures.map((fx) => measure(fx, host, options)))));
    }
  } finally {
    for (const fx of fixtures) await fx.close();
  }
  printTable(
    `idle: SQL statements of an idle host with one interval family (300 s), median of ${options.repeat} consecutive ${options.windowSeconds} s windows after ${options.settleSeconds} s settling`,
    [
      'backend',
      'host',
      'start-up statements',
      'statements per window (median)',
      'per minute',
      'by kind (all windows)',
      'server Questions/min',
      'server Queries/min',
      'other sessions',
    ],
    rows.map((r) => [
      r.backend,
      r.host === 'runtime' ? 'supervisor Runtime' : 'apsup run (with tasks)',
      String(r.startupStatements),
      String(r.statements),
      r.perMinute.toFixed(1),
      Object.entries(r.byKind)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || '-',
      r.server ? ((r.server.questions / r.windowSeconds) * 60).toFixed(0) : '-',
      r.server ? ((r.server.queries / r.windowSeconds) * 60).toFixed(0) : '-',
      r.server ? String(r.server.otherSessions) : '-',
    ]),
  );
  if (rows.some((r) => r.server && r.server.otherSessions > 0))
    console.log(
      'note: other sessions were connected to MariaDB during the window; the server counters include their statements, the client-side counts do not',
    );
  console.log(`raw results: ${writeResult('idle', { ...options, rows })}`);
  return rows;
}
