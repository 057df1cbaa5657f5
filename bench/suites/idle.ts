/**
 * idle: SQL statements executed by an idle runtime host with one interval family (300 s) and no
 * work, over a window that starts after start-up settled (default 60 s; `all` uses 20 s).
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
import { printTable, progress, writeResult } from '../lib/report.ts';
import { openBenchDatabase, type BackendFixtureLike } from '../lib/fixture.ts';
import { call } from '../lib/children.ts';
import { forkRuntime, runtimeEnv, sleep, stopRuntime } from '../lib/runtime-host.ts';
import type { StatementCounts } from '../lib/count-statements.ts';
import type { Backend } from '../../src/store/types.ts';

export interface IdleOptions { backends: Backend[]; windowSeconds: number; settleSeconds: number }

type Host = 'runtime' | 'apsup-run';

export interface IdleRow {
  backend: Backend;
  host: Host;
  windowSeconds: number;
  startupStatements: number;
  statements: number;
  perMinute: number;
  byKind: Record<string, number>;
  server?: { questions: number; queries: number; callProcedure: number; otherSessions: number };
}

const STATUS_VARS = ['Questions', 'Queries', 'Com_call_procedure'];

async function serverStatus(admin: mysql.Connection): Promise<Record<string, number>> {
  const [rows] = await admin.query(`SHOW GLOBAL STATUS WHERE Variable_name IN (${STATUS_VARS.map(() => '?').join(', ')})`, STATUS_VARS);
  return Object.fromEntries((rows as Array<{ Variable_name: string; Value: string }>).map((r) => [r.Variable_name, Number(r.Value)]));
}

async function otherSessions(admin: mysql.Connection, database: string): Promise<number> {
  const [rows] = await admin.query("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COALESCE(DB, '') <> ? AND COMMAND NOT IN ('Daemon')", [database]);
  return Number((rows as Array<{ n: number }>)[0].n);
}

async function measure(fx: BackendFixtureLike, host: Host, options: IdleOptions): Promise<IdleRow> {
  const backend = fx.backend;
  let child: ChildProcess | null = null;
  let admin: mysql.Connection | null = null;
  try {
    child = await forkRuntime(runtimeEnv(fx.db.url, {
      APSUP_BENCH_FAMILIES: 1,
      APSUP_BENCH_PROCESSOR: 'noop',
      APSUP_BENCH_SCHEDULE_SECONDS: 300,
      APSUP_BENCH_COUNT_SQL: 1,
      APSUP_BENCH_HOST: host,
    }), `idle-${backend}-${host}`);
    await call(child, { type: 'start' });
    await sleep(options.settleSeconds * 1000);
    const before = await call<StatementCounts>(child, { type: 'counts' });
    let serverBefore: Record<string, number> = {};
    let others = 0;
    if (fx.db.target.backend === 'mysql') {
      const t = fx.db.target;
      admin = await mysql.createConnection({ host: t.host, port: t.port, user: t.user, password: t.password });
      others = await otherSessions(admin, t.database);
      serverBefore = await serverStatus(admin);
    }
    await sleep(options.windowSeconds * 1000);
    let server: IdleRow['server'];
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
    const byKind: Record<string, number> = {};
    for (const [k, v] of Object.entries(after.byKind)) {
      const d = v - (before.byKind[k] ?? 0);
      if (d > 0) byKind[k] = d;
    }
    const statements = after.total - before.total;
    const row: IdleRow = { backend, host, windowSeconds: options.windowSeconds, startupStatements: before.total, statements, perMinute: (statements / options.windowSeconds) * 60, byKind, server };
    progress(`idle ${backend} ${host}: ${statements} statements in ${options.windowSeconds} s (${Object.entries(byKind).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'})`);
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
      progress(`idle: ${host} host on ${options.backends.join(' and ')}, ${options.settleSeconds} s settling, then a ${options.windowSeconds} s window`);
      rows.push(...await Promise.all(fixtures.map((fx) => measure(fx, host, options))));
    }
  } finally {
    for (const fx of fixtures) await fx.close();
  }
  printTable(
    `idle: SQL statements of an idle host with one interval family (300 s), ${options.windowSeconds} s window after ${options.settleSeconds} s settling`,
    ['backend', 'host', 'start-up statements', 'statements in window', 'per minute', 'by kind', 'server Questions/min', 'server Queries/min', 'other sessions'],
    rows.map((r) => [r.backend, r.host === 'runtime' ? 'supervisor Runtime' : 'apsup run (with tasks)', String(r.startupStatements), String(r.statements), r.perMinute.toFixed(1),
      Object.entries(r.byKind).map(([k, v]) => `${k} ${v}`).join(', ') || '-',
      r.server ? ((r.server.questions / r.windowSeconds) * 60).toFixed(0) : '-', r.server ? ((r.server.queries / r.windowSeconds) * 60).toFixed(0) : '-', r.server ? String(r.server.otherSessions) : '-']),
  );
  if (rows.some((r) => r.server && r.server.otherSessions > 0)) console.log('note: other sessions were connected to MariaDB during the window; the server counters include their statements, the client-side counts do not');
  console.log(`raw results: ${writeResult('idle', { ...options, rows })}`);
  return rows;
}
