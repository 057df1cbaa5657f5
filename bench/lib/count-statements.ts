/**
 * Statement counting for benchmark child processes only (never loaded by src/): wraps the
 * execution entry points of better-sqlite3 (Statement run/get/all/iterate, Database exec) and of
 * mysql2 (Connection query/execute, which every pool, promise wrapper and transaction handle goes
 * through), and counts calls per statement kind. Installed when APSUP_BENCH_COUNT_SQL=1.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export interface StatementCounts {
  total: number;
  byKind: Record<string, number>;
  /** The first words of the last statements counted (what an idle runtime still runs). */
  recent: string[];
  /** SQLite only (synchronous): CPU time spent per statement text (its first 90 characters), ms. */
  sqliteMs: Record<string, { n: number; ms: number }>;
  /** CPU time of the whole host process so far (start-up included), ms. */
  hostCpuMs?: number;
}

const counts: StatementCounts = { total: 0, byKind: {}, recent: [], sqliteMs: {} };

/** CPU time of this process in ms (user + system): unlike wall time, not inflated when the OS deschedules it. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function timed(source: string, run: () => unknown): unknown {
  const t = cpuMs();
  try {
    return run();
  } finally {
    const head = source
      .replace(/--[^\n]*\n/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 90);
    const e = counts.sqliteMs[head] ?? { n: 0, ms: 0 };
    counts.sqliteMs[head] = e;
    e.n += 1;
    e.ms += cpuMs() - t;
  }
}
let installed = false;

function note(sql: unknown): void {
  counts.total += 1;
  const text = typeof sql === 'string' ? sql : ((sql as { sql?: string } | null)?.sql ?? '?');
  const head = text
    .replace(/--[^\n]*\n/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const kind = head
    .split(' ')
    .slice(0, head.toUpperCase().startsWith('CALL') ? 2 : 1)
    .join(' ')
    .replace(/\(.*$/, '')
    .toUpperCase();
  counts.byKind[kind] = (counts.byKind[kind] ?? 0) + 1;
  counts.recent.push(head.slice(0, 80));
  if (counts.recent.length > 20) counts.recent.shift();
}

export function installStatementCounters(): void {
  if (installed) return;
  installed = true;
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const probe = new Database(':memory:');
  const statementProto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  probe.close();
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = statementProto[method];
    statementProto[method] = function (this: { source: string }, ...args: unknown[]) {
      note(this.source);
      return timed(this.source, () => original.apply(this, args));
    };
  }
  const dbProto = Database.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const exec = dbProto.exec;
  dbProto.exec = function (this: unknown, ...args: unknown[]) {
    note(args[0]);
    return timed(String(args[0]), () => exec.apply(this, args));
  };

  const mysql = require('mysql2') as { Connection: { prototype: object } };
  let proto: object | null = mysql.Connection.prototype;
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'query')) proto = Object.getPrototypeOf(proto);
  if (!proto) throw new Error('mysql2 Connection.prototype.query not found');
  const base = proto as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ['query', 'execute']) {
    const original = base[method];
    base[method] = function (this: unknown, ...args: unknown[]) {
      note(args[0]);
      return original.apply(this, args);
    };
  }
}

export function statementCounts(): StatementCounts {
  const cpu = process.cpuUsage();
  return {
    total: counts.total,
    byKind: { ...counts.byKind },
    recent: [...counts.recent],
    sqliteMs: { ...counts.sqliteMs },
    hostCpuMs: (cpu.user + cpu.system) / 1000,
  };
}
