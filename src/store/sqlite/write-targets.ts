/**
 * The engine's guard on a fenced transaction's statements (issue 40 item 3): which tables a
 * statement writes is read from its compiled program (program-facts.ts), never from its text,
 * and a statement that writes a table of the supervisor or the task system, the schema, or that
 * changes the connection, the transaction or a file is refused before it runs.
 *
 * The program is compiled on a probe: a second, read-only connection to the same file. Compiling
 * is not harmless: a PRAGMA applies its setting when it is compiled (`EXPLAIN PRAGMA
 * locking_mode = EXCLUSIVE` sets it), so compiling on the transaction's own connection would
 * already change it. A probe that compiled such a statement is closed (a new one serves the next
 * statement); the transaction's connection only compiles statements the probe found harmless.
 * The probe mirrors the connection: same schema (the transaction holds the write lock, so the
 * file's schema is its schema), foreign_keys and recursive_triggers copied, no attached database
 * and no temporary object (checked; both are refused here, so none can appear).
 *
 * Verdicts are cached per connection and SQL text, and dropped when PRAGMA schema_version moves.
 */
import fs from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { ReadOnlyError } from '../errors.ts';
import { isOwnTable } from '../own-tables.ts';
import { type BtreeOwner, type ProgramOp, readProgram } from './program-facts.ts';

type Db = BetterSqlite3.Database;
type DbClass = new (file: string | Buffer, options?: BetterSqlite3.Options) => Db;

const OP = 'fenced transaction';
/** Distinct statements remembered per connection (cleared whole when full: processors reuse few texts). */
const MAX_VERDICTS = 2000;
/** Open probes per process (one per database file in use; the oldest is closed beyond). */
const MAX_PROBES = 8;
/** Settings that change the code SQLite generates for a write (cascades, REPLACE's delete triggers). */
const MIRRORED_FLAGS = ['foreign_keys', 'recursive_triggers'] as const;

interface Probe {
  db: Db;
  schemaVersion: number;
  owners: Map<string, BtreeOwner>;
  analyzeVtab: string | null;
}

/** Per handle (a connection, or the closable proxy of one a bounded transaction passes on). */
interface Verdicts {
  schemaVersion: BetterSqlite3.Statement;
  version: number;
  bySql: Map<string, string | null>;
}

const verdictsOf = new WeakMap<Db, Verdicts>();
/** Probes of database files, by path and inode (a path reused by another file gets a new probe). */
const probes = new Map<string, Probe>();

/** The statement's program, or the error compiling it. */
function explain(db: Db, sql: string, params: readonly unknown[]): ProgramOp[] {
  const stmt = db.prepare(`EXPLAIN ${sql}`);
  // EXPLAIN QUERY PLAN lists a plan, not the program: not what was asked for.
  if (!stmt.columns().some((c) => c.name === 'opcode')) throw new ReadOnlyError(OP, 'the engine lists no program for this statement');
  return stmt.all(...params) as ProgramOp[];
}

/** The table of every root page of the probe's databases (indexes map to their table). */
function ownersOf(db: Db): Map<string, BtreeOwner> {
  const owners = new Map<string, BtreeOwner>();
  for (const { seq, name } of db.pragma('database_list') as Array<{ seq: number; name: string }>) {
    const rows = db.prepare(`SELECT tbl_name, rootpage FROM "${name.replaceAll('"', '""')}".sqlite_schema WHERE rootpage > 0`).all() as Array<{
      tbl_name: string;
      rootpage: number;
    }>;
    for (const r of rows) owners.set(`${seq}:${r.rootpage}`, { database: name, table: r.tbl_name });
  }
  return owners;
}

/** The connection's databases and temporary objects are what a fresh probe has: main only. */
function assertMirrorable(db: Db): void {
  const databases = db.pragma('database_list') as Array<{ name: string }>;
  if (databases.some((d) => d.name !== 'main' && d.name !== 'temp'))
    throw new ReadOnlyError(OP, 'the connection has an attached database; the engine check cannot mirror it');
  if (databases.some((d) => d.name === 'temp') && Number(db.prepare('SELECT count(*) FROM temp.sqlite_schema').pluck().get()) > 0)
    throw new ReadOnlyError(OP, 'the connection has temporary objects; the engine check cannot mirror them');
}

/** In-memory and anonymous databases have no file another connection could open: a copy then. */
function isFileless(db: Db): boolean {
  return db.memory || db.name === '';
}

function probeKey(db: Db): string {
  const st = fs.statSync(db.name);
  return `${st.dev}:${st.ino}:${db.name}`;
}

function openProbe(db: Db, schemaVersion: number): Probe {
  // The connection's own driver (not imported: a process on MySQL never loads it); through the
  // prototype, as a bounded transaction's proxy wraps the constructor like any function.
  const Database = Object.getPrototypeOf(db).constructor as DbClass;
  const probe = isFileless(db) ? new Database(db.serialize()) : new Database(db.name, { readonly: true, fileMustExist: true });
  try {
    const seen = Number(probe.pragma('schema_version', { simple: true }));
    if (seen !== schemaVersion) throw new ReadOnlyError(OP, `the engine check sees schema version ${seen}, the transaction ${schemaVersion}; retry`);
    const optimize = explain(probe, 'SELECT * FROM pragma_optimize', []).find((op) => op.opcode === 'VOpen');
    return { db: probe, schemaVersion, owners: ownersOf(probe), analyzeVtab: optimize ? String(optimize.p4) : null };
  } catch (error) {
    probe.close();
    throw error;
  }
}

function closeProbe(key: string | null, probe: Probe): void {
  if (key !== null && probes.get(key) === probe) probes.delete(key);
  if (probe.db.open) probe.db.close();
}

/** A probe of db's file at this schema version, with db's code-generation flags. */
function probeFor(db: Db, schemaVersion: number): { key: string | null; probe: Probe } {
  assertMirrorable(db);
  const key = isFileless(db) ? null : probeKey(db);
  let probe = key === null ? undefined : probes.get(key);
  if (probe && probe.schemaVersion !== schemaVersion) {
    closeProbe(key, probe);
    probe = undefined;
  }
  if (!probe) {
    probe = openProbe(db, schemaVersion);
    if (key !== null) {
      if (probes.size >= MAX_PROBES) {
        const [oldest, old] = probes.entries().next().value as [string, Probe];
        closeProbe(oldest, old);
      }
      probes.set(key, probe);
    }
  }
  for (const flag of MIRRORED_FLAGS) {
    const value = Number(db.pragma(flag, { simple: true }));
    if (Number(probe.db.pragma(flag, { simple: true })) !== value) probe.db.pragma(`${flag} = ${value}`);
  }
  return { key, probe };
}

/**
 * `EXPLAIN sql` did not compile. If `sql` itself does not compile, its own error is the answer
 * (nothing ran); if it does, it is a statement whose program the engine cannot list (an EXPLAIN).
 */
function compileFailure(db: Db, sql: string, schemaVersion: number, error: unknown): unknown {
  if ((error as Error)?.name !== 'SqliteError') return error; // binding (parameters) or several statements: as the run would say
  const fresh = openProbe(db, schemaVersion);
  try {
    fresh.db.prepare(sql);
  } catch (own) {
    return own;
  } finally {
    fresh.db.close(); // compiling may have changed it
  }
  return new ReadOnlyError(OP, 'the engine cannot list the program of this statement (an EXPLAIN?), so it cannot tell what it writes', { cause: error });
}

function judge(db: Db, sql: string, params: readonly unknown[], schemaVersion: number): string | null {
  const { key, probe } = probeFor(db, schemaVersion);
  let ops: ProgramOp[];
  try {
    ops = explain(probe.db, sql, params);
  } catch (error) {
    closeProbe(key, probe);
    if (error instanceof ReadOnlyError) throw error;
    throw compileFailure(db, sql, schemaVersion, error);
  }
  const facts = readProgram(ops, (d, root) => probe.owners.get(`${d}:${root}`) ?? null, probe.analyzeVtab, isOwnTable);
  // A PRAGMA (Expire) applied its setting to the probe when it compiled: the next one starts afresh.
  if (key === null || ops.some((op) => op.opcode === 'Expire')) closeProbe(key, probe);
  return facts.refusal;
}

/**
 * Throws ReadOnlyError when the statement's program writes a table of the supervisor or the task
 * system, the schema or SQLite's internal tables, or changes the connection, the transaction or
 * a file. `params` are the statement's (EXPLAIN binds them like the run). Call inside the open
 * transaction on `db`, before the statement is prepared on it.
 */
export function assertSqliteWriteTargets(db: Db, sql: string, params: readonly unknown[] = []): void {
  let verdicts = verdictsOf.get(db);
  if (!verdicts) {
    verdicts = { schemaVersion: db.prepare('PRAGMA schema_version').pluck(), version: -1, bySql: new Map() };
    verdictsOf.set(db, verdicts);
  }
  const schemaVersion = Number(verdicts.schemaVersion.get());
  if (schemaVersion !== verdicts.version) {
    verdicts.bySql.clear();
    verdicts.version = schemaVersion;
  }
  let verdict = verdicts.bySql.get(sql);
  if (verdict === undefined) {
    verdict = judge(db, sql, params, schemaVersion);
    if (verdicts.bySql.size >= MAX_VERDICTS) verdicts.bySql.clear();
    verdicts.bySql.set(sql, verdict);
  }
  if (verdict !== null) throw new ReadOnlyError(OP, `the engine's program ${verdict}`);
}

/** The tables the statement's program opens for writing (`database.table`), for tests and diagnostics. */
export function sqliteWriteTargets(db: Db, sql: string, params: readonly unknown[] = []): string[] {
  const schemaVersion = Number(db.pragma('schema_version', { simple: true }));
  const { key, probe } = probeFor(db, schemaVersion);
  let ops: ProgramOp[];
  try {
    ops = explain(probe.db, sql, params);
  } finally {
    if (key === null || !ops! || ops.some((op) => op.opcode === 'Expire')) closeProbe(key, probe);
  }
  return readProgram(ops, (d, root) => probe.owners.get(`${d}:${root}`) ?? null, probe.analyzeVtab, isOwnTable).writes;
}
