/**
 * What SQLite's own compiled program says a statement does (issue 40 item 3, "SQLite: the engine
 * decides"): the b-trees it opens for writing and the operations that change the schema, the
 * connection, the transaction or a file. Read from `EXPLAIN <statement>`, which compiles the
 * statement and lists its program, trigger and foreign-key sub-programs included, without running
 * it. The opcodes are those of the SQLite bundled with better-sqlite3 12 (3.53): every one that
 * is not a read, a computation or a write through a cursor opened by OpenWrite/Clear is refused.
 */

/** One instruction of an EXPLAIN listing. */
export interface ProgramOp {
  opcode: string;
  p1: number;
  p2: number;
  p3: number;
  p4: unknown;
  p5: number;
}

const SCHEMA = 'changes the schema (DDL)';

/**
 * Refused opcodes. Expire is emitted by every PRAGMA that sets something (sqlite3Pragma starts
 * with RunOnlyOnce; only the cookie reads and compile_options drop it) and by ATTACH / DETACH.
 */
export const REFUSED_OPCODES: Readonly<Record<string, string>> = {
  AutoCommit: 'ends or begins the transaction (COMMIT, END, ROLLBACK, BEGIN)',
  Savepoint: 'sets or ends a savepoint (SAVEPOINT, RELEASE, ROLLBACK TO)',
  Expire: 'changes the connection (PRAGMA, ATTACH, DETACH)',
  ParseSchema: SCHEMA,
  CreateBtree: SCHEMA,
  Destroy: SCHEMA,
  DropTable: SCHEMA,
  DropIndex: SCHEMA,
  DropTrigger: SCHEMA,
  SetCookie: 'changes the database header (schema_version, user_version, DDL)',
  VCreate: SCHEMA,
  VDestroy: SCHEMA,
  VRename: SCHEMA,
  Vacuum: 'vacuums (VACUUM, or VACUUM INTO a file)',
  IncrVacuum: 'vacuums (incremental_vacuum)',
  JournalMode: 'changes the journal mode',
  Checkpoint: 'checkpoints the WAL',
  LoadAnalysis: 'runs ANALYZE',
  SqlExec: 'runs statements of its own (ANALYZE, PRAGMA optimize)',
  MaxPgcnt: 'changes the page limit',
  TableLock: 'locks a table',
};

/** Built-in functions that change the connection (their Function/PureFunc P4 is `name(nArg)`). */
export const REFUSED_FUNCTIONS: Readonly<Record<string, string>> = {
  sqlite_attach: 'attaches a database (ATTACH)',
  sqlite_detach: 'detaches a database (DETACH)',
  load_extension: 'loads an extension',
};

/** OpenWrite's P5 flag: P2 is a register holding the root page (a b-tree created by the statement). */
const OPFLAG_P2ISREG = 0x10;

/**
 * Why one instruction changes the schema, the connection, the transaction or a file, or null.
 * The read handle's reader process (sqlite-read-process.ts) applies the same rule to the same
 * lists (REFUSED_OPCODES, REFUSED_FUNCTIONS), passed to it as JSON.
 */
export function refusedOperation(op: ProgramOp, analyzeVtab: string | null = null): string | null {
  const reason = REFUSED_OPCODES[op.opcode];
  if (reason) return `${reason} [${op.opcode}]`;
  if (op.opcode === 'Function' || op.opcode === 'PureFunc') {
    const name = functionName(op.p4);
    const fn = name === null ? undefined : REFUSED_FUNCTIONS[name];
    return fn ? `${fn} [${name}]` : null;
  }
  if (op.opcode === 'VOpen' && analyzeVtab !== null && String(op.p4) === analyzeVtab) return 'runs PRAGMA optimize (ANALYZE) [pragma_optimize]';
  return null;
}

/** A Function instruction's P4 is `name(nArg)`. */
export function functionName(p4: unknown): string | null {
  return /^([A-Za-z_][A-Za-z0-9_]*)\(/.exec(String(p4))?.[1]?.toLowerCase() ?? null;
}

/** Where a written b-tree belongs: the table (an index maps to its table) and its database. */
export interface BtreeOwner {
  database: string;
  table: string;
}

export interface ProgramFacts {
  /** The first reason to refuse the statement, or null. */
  refusal: string | null;
  /** The tables the program opens for writing, as `database.table`. */
  writes: string[];
}

/**
 * Reads an EXPLAIN listing. `ownerOf(db, root)` maps a database index and a root page to its
 * table (null: no table of the schema); `analyzeVtab` is the P4 of pragma_optimize's VOpen on the
 * compiling connection (a SELECT from it runs PRAGMA optimize, i.e. ANALYZE), or null.
 */
export function readProgram(
  ops: readonly ProgramOp[],
  ownerOf: (db: number, root: number) => BtreeOwner | null,
  analyzeVtab: string | null,
  isOwnTable: (table: string) => boolean,
): ProgramFacts {
  let refusal: string | null = null;
  const refuse = (reason: string) => {
    refusal ??= reason;
  };
  const written = new Map<string, BtreeOwner>();
  const target = (db: number, root: number) => {
    if (root === 1) return refuse('writes the schema table');
    const owner = ownerOf(db, root);
    if (!owner) return refuse(`writes b-tree ${root} of database ${db}, which is no table of the schema`);
    written.set(`${owner.database}.${owner.table}`, owner);
  };
  for (const op of ops) {
    const reason = refusedOperation(op, analyzeVtab);
    if (reason) refuse(reason);
    else if (op.opcode === 'OpenWrite') {
      if (op.p5 & OPFLAG_P2ISREG) refuse(`${SCHEMA} [OpenWrite of a new b-tree]`);
      else target(op.p3, op.p2);
    } else if (op.opcode === 'Clear') target(op.p2, op.p1);
  }
  const owners = [...written.values()];
  const business = owners.filter((o) => !o.table.toLowerCase().startsWith('sqlite_'));
  for (const { database, table } of owners) {
    if (isOwnTable(table)) refuse(`writes ${table}, a table of the supervisor or the task system (only their operations write it)`);
    // sqlite_sequence is written by an INSERT into a business AUTOINCREMENT table, never alone.
    else if (table.toLowerCase() === 'sqlite_sequence' ? business.length === 0 : table.toLowerCase().startsWith('sqlite_'))
      refuse(`writes ${database}.${table}, an internal table of SQLite`);
  }
  return { refusal, writes: [...written.keys()] };
}
