// The operation catalogue (src/store/operations.ts) against the SQL files: every operation has a
// stored procedure procedures/oceanbase/<op>.sql and a SQLite script sql/sqlite/<op>.sql with the
// contract header, the same parameters in the same order, the declared transaction ownership,
// is installed by a migration, and uses no construct ruled out for portability
// (procedures/oceanbase/COMPATIBILITY.md). Text checks only, except the last test, which compares
// the routines a migrated MariaDB schema really has with the catalogue.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { MIGRATIONS_DIR, PROCEDURES_DIR, SQLITE_SCRIPTS_DIR } from '../src/paths.ts';
import { latestInstallers, listMigrations, parseDirectives, procedurePin } from '../src/migrations/catalog.ts';
import { splitSqlStatements } from '../src/sql-split.ts';
import { sqliteScriptText } from '../src/store/sqlite/script.ts';
import { INTERNAL_PROCEDURES, INTERNAL_PROCEDURE_NAMES, OPERATIONS, OPERATION_NAMES, type OperationSpec } from '../src/store/operations.ts';
import { SUPERVISOR_OPERATIONS } from '../src/store/supervisor-operations.ts';
import { TASK_OPERATIONS } from '../src/store/task-operations.ts';
import { isStoreErrorCode } from '../src/store/errors.ts';
import { createBackend } from './helpers/backends.ts';

const HEADER_SECTIONS = ['Purpose', 'Parameters', 'Result', 'Errors'] as const;

function read(file: string): string {
  return fs.readFileSync(file, 'utf8');
}

function procedureFile(op: string): string {
  return MYSQL_ONLY.has(op) ? path.join(PROCEDURES_DIR, 'internal', `${op}.sql`) : path.join(PROCEDURES_DIR, `${op}.sql`);
}

function scriptFile(op: string): string {
  return path.join(SQLITE_SCRIPTS_DIR, `${op}.sql`);
}

/** The leading comment block: every line up to the first line that is not a `--` comment. */
function headerOf(text: string): string[] {
  const lines = text.split('\n');
  const header: string[] = [];
  for (const line of lines) {
    if (!/^\s*--/.test(line)) break;
    header.push(line);
  }
  return header;
}

/** One section of a header (from its "-- <Name>" line up to the next section line). */
function headerSection(header: string[], name: string): string {
  const sections = /^--\s*(Operation|Purpose|Locks|Transaction|Parameters|Result|Errors)\b/;
  const out: string[] = [];
  let inside = false;
  for (const line of header) {
    const m = sections.exec(line);
    if (m) inside = m[1] === name;
    if (inside) out.push(line);
  }
  return out.join('\n');
}

/** Error codes a file raises itself: MESSAGE_TEXT = '<code>' (MySQL), literals of INSERT INTO pc_aps_signals (SQLite). */
function raisedCodes(text: string): string[] {
  const body = text
    .split('\n')
    .map((line) => line.replace(/--.*$/, ''))
    .join('\n');
  const codes = new Set<string>();
  for (const m of body.matchAll(/MESSAGE_TEXT\s*=\s*'([a-z_]+)'/g)) codes.add(m[1]);
  for (const statement of splitSqlStatements(body)) {
    if (!/^INSERT\s+INTO\s+pc_aps_signals\b/i.test(statement)) continue;
    for (const m of statement.matchAll(/'([a-z_]+)'/g)) if (isStoreErrorCode(m[1])) codes.add(m[1]);
  }
  return [...codes].sort();
}

/** The text without `--` comments and without string literals (for token scans). */
function codeOf(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/--.*$/, ''))
    .join('\n')
    .replace(/'(?:[^']|'')*'/g, "''");
}

/** Parameters of `CREATE PROCEDURE name(...)`: [{ mode, name }] in declaration order. */
function procedureParameters(text: string, op: string): Array<{ mode: string; name: string; type: string }> {
  const code = codeOf(text);
  const head = new RegExp(`CREATE\\s+PROCEDURE\\s+\`?${op}\`?\\s*\\(`, 'i').exec(code);
  assert.ok(head, `procedures/oceanbase/${op}.sql: no CREATE PROCEDURE ${op}(`);
  let depth = 1;
  let i = head.index + head[0].length;
  const start = i;
  for (; i < code.length && depth > 0; i += 1) {
    if (code[i] === '(') depth += 1;
    else if (code[i] === ')') depth -= 1;
  }
  const list = code.slice(start, i - 1);
  const parts: string[] = [];
  let current = '';
  depth = 0;
  for (const ch of list) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current.trim() !== '') parts.push(current);
  return parts.map((p) => {
    const m = /^\s*(?:(IN|OUT|INOUT)\s+)?`?([A-Za-z_][A-Za-z0-9_]*)`?\s+(.+?)\s*$/is.exec(p);
    assert.ok(m, `procedures/oceanbase/${op}.sql: cannot parse parameter ${JSON.stringify(p.trim())}`);
    return { mode: (m[1] ?? 'IN').toUpperCase(), name: m[2], type: m[3].replace(/\s+/g, ' ') };
  });
}

/** `-- @procedure <name>` lines of migrations/oceanbase/*.up.sql, in migration and line order. */
function installedByMigrations(): Array<{ name: string; migration: string; order: number }> {
  const dir = path.join(MIGRATIONS_DIR, 'oceanbase');
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.up.sql'))
    .sort();
  const out: Array<{ name: string; migration: string; order: number }> = [];
  for (const file of files) {
    for (const line of read(path.join(dir, file)).split('\n')) {
      const m = /^--\s*@procedure\s+(\S+)(?:\s+sha256=[0-9a-f]{64})?\s*$/.exec(line.trim());
      if (m) out.push({ name: m[1], migration: file, order: out.length });
    }
  }
  return out;
}

// Constructs ruled out by procedures/oceanbase/COMPATIBILITY.md: shared locks (OceanBase rejects
// FOR SHARE), SKIP LOCKED, JSON_TABLE, and clock functions that depend on the session time zone
// (all times come from UTC_TIMESTAMP).
const FORBIDDEN: Array<[string, RegExp]> = [
  ['FOR SHARE', /\bFOR\s+SHARE\b/i],
  ['LOCK IN SHARE MODE', /\bLOCK\s+IN\s+SHARE\s+MODE\b/i],
  ['SKIP LOCKED', /\bSKIP\s+LOCKED\b/i],
  ['NOWAIT', /\bNOWAIT\b/i],
  ['JSON_TABLE', /\bJSON_TABLE\b/i],
  ['NOW(', /\bNOW\s*\(/i],
  ['SYSDATE(', /\bSYSDATE\s*\(/i],
  ['CURRENT_TIMESTAMP', /\bCURRENT_TIMESTAMP\b/i],
  ['LOCALTIMESTAMP', /\bLOCALTIME(?:STAMP)?\b/i],
  ['CURDATE(', /\bCUR(?:DATE|TIME)\s*\(/i],
  ['UNIX_TIMESTAMP(', /\bUNIX_TIMESTAMP\s*\(/i],
];

/** Procedures the main migration chain installs: operations (not the adoption conversions) and the internal ones. */
const MIGRATED_OPERATIONS: string[] = [
  ...OPERATION_NAMES.filter((op) => (OPERATIONS[op] as OperationSpec).installedBy !== 'adoption'),
  ...INTERNAL_PROCEDURE_NAMES,
];
/** Every procedure file: the operations and the MySQL-only internal procedures (no SQLite twin). */
const SPECS: Record<string, OperationSpec> = { ...OPERATIONS, ...INTERNAL_PROCEDURES };
const PROCEDURE_NAMES = Object.keys(SPECS);
/** Internal procedures whose SQLite twin is an include-only script (operations' scripts include it). */
const SQLITE_INCLUDES = new Set<string>(INTERNAL_PROCEDURE_NAMES.filter((op) => (INTERNAL_PROCEDURES[op] as OperationSpec).sqliteInclude));
const MYSQL_ONLY = new Set<string>(INTERNAL_PROCEDURE_NAMES.filter((op) => !SQLITE_INCLUDES.has(op)));

describe('operation catalogue: src/store/operations.ts agrees with the SQL files', () => {
  test('adoption conversions are installed by no migration and are exactly the pc_aps_adopt_ operations', () => {
    const adoption = OPERATION_NAMES.filter((op) => (OPERATIONS[op] as OperationSpec).installedBy === 'adoption');
    assert.deepEqual(
      adoption,
      OPERATION_NAMES.filter((op) => op.startsWith('pc_aps_adopt_')),
    );
    assert.ok(adoption.length >= 2);
    const installed = new Set(installedByMigrations().map((i) => i.name));
    for (const op of adoption) assert.ok(!installed.has(op), `${op} must not be installed by a migration (it reads tables of a database being adopted)`);
  });

  test('the catalogue is its two parts, disjoint: the supervisor pc_aps_ and the task pc_task_ operations', () => {
    const supervisor = Object.keys(SUPERVISOR_OPERATIONS);
    const tasks = Object.keys(TASK_OPERATIONS);
    // A name in both parts would be overridden silently by the spread that joins them.
    assert.deepEqual([...supervisor, ...tasks].sort(), [...OPERATION_NAMES].sort());
    assert.equal(new Set([...supervisor, ...tasks]).size, supervisor.length + tasks.length);
    for (const op of supervisor) assert.match(op, /^pc_aps_/);
    for (const op of tasks) assert.match(op, /^pc_task_/);
  });

  test('the catalogue is not empty and every name is pc_aps_ or pc_task_<snake_case>', () => {
    assert.ok(OPERATION_NAMES.length >= 14, `only ${OPERATION_NAMES.length} operations`);
    for (const op of OPERATION_NAMES) {
      assert.match(op, /^pc_(?:aps|task)_[a-z]+(?:_[a-z0-9]+)*$/);
      assert.ok(['own', 'caller', 'read', 'opens'].includes(OPERATIONS[op].transaction), `${op}: transaction mode`);
      assert.equal(new Set(OPERATIONS[op].params).size, OPERATIONS[op].params.length, `${op}: duplicate parameter names`);
    }
  });

  test('internal procedures are pc_aps_ names apart from the operations, MySQL-only unless an operation script includes their twin', () => {
    for (const op of INTERNAL_PROCEDURE_NAMES) {
      assert.match(op, /^pc_aps_[a-z]+(?:_[a-z0-9]+)*$/);
      assert.ok(!(op in OPERATIONS), `${op} is both an operation and an internal procedure`);
      if (MYSQL_ONLY.has(op)) {
        assert.ok(!fs.existsSync(scriptFile(op)), `${op} is MySQL-only: no sql/sqlite/${op}.sql`);
        continue;
      }
      const text = read(scriptFile(op));
      assert.doesNotMatch(text, /^\s*(BEGIN|COMMIT)\b/im, `sql/sqlite/${op}.sql is included: it owns no transaction`);
      // An include may bind a parameter (`-- @include <op> <param>=<expression>`).
      const includers = OPERATION_NAMES.filter(
        (other) => fs.existsSync(scriptFile(other)) && new RegExp(`^--\\s*@include\\s+${op}(?:\\s+[a-z_][a-z0-9_]*=.*)?$`, 'm').test(read(scriptFile(other))),
      );
      assert.ok(includers.length > 0, `no operation script includes sql/sqlite/${op}.sql`);
      // The procedure is reached (CALL, directly or through another operation's procedure) by the
      // operations whose scripts include the twin, and only by them.
      const calls = (caller: string, callee: string) => new RegExp(`\\bCALL\\s+${callee}\\b`, 'i').test(codeOf(read(procedureFile(caller))));
      const direct = OPERATION_NAMES.filter((other) => calls(other, op));
      const callers = OPERATION_NAMES.filter((other) => direct.includes(other) || direct.some((via) => via !== other && calls(other, via)));
      assert.deepEqual(callers, includers, `${op}: the MySQL callers and the SQLite includers differ`);
    }
  });

  for (const op of PROCEDURE_NAMES) {
    describe(op, () => {
      const spec = SPECS[op];
      const mysqlOnly = MYSQL_ONLY.has(op);

      test(mysqlOnly ? 'procedures/oceanbase has the file' : 'procedures/oceanbase and sql/sqlite both have the file', () => {
        assert.ok(fs.existsSync(procedureFile(op)), `missing procedures/oceanbase/${op}.sql`);
        if (!mysqlOnly) assert.ok(fs.existsSync(scriptFile(op)), `missing sql/sqlite/${op}.sql`);
      });

      const files = mysqlOnly
        ? ([['procedure', procedureFile(op)]] as const)
        : ([
            ['procedure', procedureFile(op)],
            ['SQLite script', scriptFile(op)],
          ] as const);
      for (const [kind, file] of files) {
        test(`${kind} starts with a header comment: Purpose, Parameters, Result, Errors`, () => {
          const text = read(file);
          assert.match(text.split('\n')[0], /^--/, `${file}: the first line is not a comment`);
          const header = headerOf(text).join('\n');
          for (const section of HEADER_SECTIONS) {
            assert.match(header, new RegExp(`^--\\s*${section}\\b`, 'm'), `${file}: the header has no "${section}" line`);
          }
          assert.match(header, new RegExp(`\\b${op}\\b`), `${file}: the header does not name the operation`);
        });
      }

      test('the headers name every parameter in Parameters and every code the file raises in Errors', () => {
        const problems: string[] = [];
        const procedure = read(procedureFile(op));
        const script = mysqlOnly ? '' : read(scriptFile(op));
        const procedureHeader = headerOf(procedure);
        const scriptHeader = headerOf(script);
        const procedureParams = headerSection(procedureHeader, 'Parameters');
        for (const p of spec.params) {
          if (!new RegExp(`\\bp_${p}\\b`).test(procedureParams)) problems.push(`procedures/oceanbase/${op}.sql: Parameters does not describe p_${p}`);
        }
        const scriptParams = headerSection(scriptHeader, 'Parameters');
        const used = mysqlOnly
          ? new Set<string>()
          : new Set([...codeOf(sqliteScriptText(op)).matchAll(/(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
        for (const p of used) {
          if (!new RegExp(`:${p}\\b`).test(scriptParams)) problems.push(`sql/sqlite/${op}.sql: Parameters does not describe :${p}`);
        }
        const checked = [
          [`procedures/oceanbase/${op}.sql`, procedure, procedureHeader],
          [`sql/sqlite/${op}.sql`, script, scriptHeader],
        ] as const;
        for (const [file, text, header] of mysqlOnly ? checked.slice(0, 1) : checked) {
          const errors = headerSection(header, 'Errors');
          for (const code of raisedCodes(text.split('\n').slice(header.length).join('\n'))) {
            if (!new RegExp(`\\b${code}\\b`).test(errors)) problems.push(`${file}: raises ${code}, which Errors does not list`);
          }
        }
        assert.deepEqual(problems, []);
      });

      test('the procedure file holds exactly one CREATE PROCEDURE of that name', () => {
        const code = codeOf(read(procedureFile(op)));
        const creates = [...code.matchAll(/\bCREATE\s+(?:DEFINER\s*=\s*\S+\s+)?PROCEDURE\s+`?([A-Za-z0-9_]+)`?/gi)].map((m) => m[1]);
        assert.deepEqual(creates, [op]);
        assert.doesNotMatch(code, /\bCREATE\s+(?:DEFINER\s*=\s*\S+\s+)?(?:FUNCTION|TRIGGER|TABLE|VIEW|EVENT)\b/i, 'only the procedure is created');
        assert.doesNotMatch(code, /^\s*DELIMITER\b/im, 'no client DELIMITER directives (the migration runner executes the file whole)');
      });

      test('procedure parameters are IN p_<name>, in the catalogue order', () => {
        const params = procedureParameters(read(procedureFile(op)), op);
        const declared = params.map((p) => p.name);
        const catalogue = spec.params.map((p) => `p_${p}`);
        assert.deepEqual(declared, catalogue, `procedures/oceanbase/${op}.sql declares (${declared.join(', ')}), the catalogue says (${catalogue.join(', ')})`);
        for (const p of params) assert.equal(p.mode, 'IN', `${op}.${p.name} must be an IN parameter (the adapter binds values positionally)`);
      });

      if (!mysqlOnly)
        test('every :name used by the SQLite script is a catalogue parameter', () => {
          const code = codeOf(sqliteScriptText(op));
          const used = new Set([...code.matchAll(/(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
          const unknown = [...used].filter((name) => !(spec.params as readonly string[]).includes(name));
          assert.deepEqual(unknown, [], `sql/sqlite/${op}.sql uses parameters the adapter never binds`);
          assert.ok(used.size > 0 || (spec.params as readonly string[]).length === 0, `sql/sqlite/${op}.sql uses none of its parameters`);
          assert.doesNotMatch(code, /\?|[@$][A-Za-z_]/, 'only :name parameters (no ?, ?NNN, @name or $name)');
        });

      if (!mysqlOnly)
        test(`transaction ownership '${spec.transaction}' in the SQLite script`, () => {
          const statements = splitSqlStatements(sqliteScriptText(op));
          assert.ok(statements.length > 0);
          const control = (s: string) => /^(BEGIN|COMMIT|ROLLBACK|END|SAVEPOINT|RELEASE)\b/i.test(s);
          if (spec.transaction === 'own') {
            assert.match(statements[0], /^BEGIN\s+IMMEDIATE$/i, `sql/sqlite/${op}.sql must start with BEGIN IMMEDIATE`);
            assert.match(statements[statements.length - 1], /^COMMIT$/i, `sql/sqlite/${op}.sql must end with COMMIT`);
            assert.deepEqual(statements.slice(1, -1).filter(control), [], 'no other transaction control in between');
          } else {
            assert.deepEqual(statements.filter(control), [], `sql/sqlite/${op}.sql runs in the caller's transaction and must not control it`);
          }
          if (spec.transaction === 'read') {
            assert.deepEqual(
              statements.filter((s) => !/^(SELECT|WITH)\b/i.test(s)),
              [],
              `sql/sqlite/${op}.sql is a read and must only SELECT`,
            );
          }
        });

      test(`transaction ownership '${spec.transaction}' in the procedure`, () => {
        const code = codeOf(read(procedureFile(op)));
        const starts = (code.match(/\bSTART\s+TRANSACTION\b|\bBEGIN\s+WORK\b/gi) ?? []).length;
        const commits = (code.match(/\bCOMMIT\b/gi) ?? []).length;
        // A body that is one CALL of another operation owns that operation's transaction (pc_task_claim).
        const callee = /\)\s*BEGIN\s+CALL\s+(pc_[a-z0-9_]+)\s*\([^;]*\)\s*;\s*END\s*;?\s*$/i.exec(code)?.[1];
        const delegate = callee && callee in OPERATIONS && callee !== op ? callee : null;
        if (delegate) {
          assert.equal(
            (OPERATIONS as Record<string, OperationSpec>)[delegate].transaction,
            spec.transaction,
            `${op} delegates to ${delegate}: the same transaction ownership`,
          );
        } else if (spec.transaction === 'own') {
          assert.equal(starts, 1, `${op} owns its transaction: exactly one START TRANSACTION`);
          assert.ok(commits >= 1, `${op} owns its transaction: COMMIT`);
          assert.match(
            code,
            /DECLARE\s+EXIT\s+HANDLER\s+FOR\s+SQLEXCEPTION\s+BEGIN\s+ROLLBACK\s*;\s*RESIGNAL\s*;\s*END/i,
            `${op} owns its transaction and must roll it back on any error (EXIT HANDLER ... ROLLBACK; RESIGNAL)`,
          );
        } else if (spec.transaction === 'opens') {
          assert.equal(starts, 1, `${op} opens the caller's transaction: exactly one START TRANSACTION`);
          assert.equal(commits, 0, `${op} opens the caller's transaction and leaves it open: no COMMIT`);
          assert.match(
            code,
            /DECLARE\s+EXIT\s+HANDLER\s+FOR\s+SQLEXCEPTION\s+BEGIN\s+ROLLBACK\s*;\s*RESIGNAL\s*;\s*END/i,
            `${op} must not leave a transaction open when it fails (EXIT HANDLER ... ROLLBACK; RESIGNAL)`,
          );
        } else {
          assert.equal(starts, 0, `${op} runs in the caller's transaction: no START TRANSACTION`);
          assert.equal(commits, 0, `${op} runs in the caller's transaction: no COMMIT`);
          assert.doesNotMatch(code, /\bROLLBACK\b/i, `${op} runs in the caller's transaction: no ROLLBACK`);
        }
        if (spec.transaction === 'read') {
          assert.doesNotMatch(code, /\b(INSERT|UPDATE|DELETE|REPLACE)\b|\bFOR\s+UPDATE\b/i, `${op} is a read: no writes or locks`);
        }
      });

      test('the procedure uses no construct ruled out for portability', () => {
        const code = codeOf(read(procedureFile(op)));
        const found = FORBIDDEN.filter(([, re]) => re.test(code)).map(([name]) => name);
        assert.deepEqual(found, [], `procedures/oceanbase/${op}.sql`);
      });
    });
  }

  test('procedures/oceanbase and sql/sqlite hold the same operation files; MySQL-only internal procedures only in procedures/oceanbase/internal', () => {
    const sql = (f: string) => f.endsWith('.sql');
    const procedures = fs.readdirSync(PROCEDURES_DIR).filter(sql).sort();
    const scripts = fs.readdirSync(SQLITE_SCRIPTS_DIR).sort();
    assert.deepEqual(procedures, scripts, 'procedures/oceanbase/*.sql and sql/sqlite/*.sql');
    const expected = [...OPERATION_NAMES, ...SQLITE_INCLUDES].map((op) => `${op}.sql`).sort();
    assert.deepEqual(procedures, expected, 'the operations and the internal procedures with a SQLite twin');
    const others = fs.readdirSync(PROCEDURES_DIR).filter((f) => !sql(f) && f !== 'COMPATIBILITY.md' && f !== 'internal');
    assert.deepEqual(others, [], 'procedures/oceanbase holds nothing else');
    assert.deepEqual(
      fs.readdirSync(path.join(PROCEDURES_DIR, 'internal')).sort(),
      [...MYSQL_ONLY].map((op) => `${op}.sql`).sort(),
      'procedures/oceanbase/internal',
    );
  });

  test('every procedure is installed by "-- @procedure" lines (first install after the procedures it calls; later migrations may reinstall)', () => {
    const installed = installedByMigrations();
    const names = [...new Set(installed.map((i) => i.name))];
    assert.deepEqual([...names].sort(), [...MIGRATED_OPERATIONS].sort(), 'the @procedure lines name exactly the catalogue (adoption conversions excepted)');
    // The callee's first install precedes the caller's latest one (the install of its current text).
    const first = new Map<string, number>();
    const latest = new Map<string, number>();
    for (const i of installed) {
      if (!first.has(i.name)) first.set(i.name, i.order);
      latest.set(i.name, i.order);
    }
    for (const op of PROCEDURE_NAMES) {
      const calls = [...codeOf(read(procedureFile(op))).matchAll(/\bCALL\s+`?([A-Za-z0-9_]+)`?/gi)].map((m) => m[1]);
      for (const callee of calls) {
        assert.ok(first.has(callee), `${op} calls ${callee}, which no migration installs`);
        if (latest.has(op)) assert.ok(first.get(callee)! < latest.get(op)!, `${op} calls ${callee}, which is installed after it`);
      }
    }
  });

  test('append-only guard: the latest migration installing each procedure pins the current file (a changed procedure needs a NEW migration)', () => {
    const files = listMigrations('oceanbase');
    const latest = latestInstallers(files);
    const problems: string[] = [];
    for (const op of MIGRATED_OPERATIONS) {
      const installer = latest.get(op);
      if (!installer) {
        problems.push(`${op}: no migration installs it`);
        continue;
      }
      const file = files.find((f) => f.name === installer)!;
      const directive = parseDirectives(file.up, `${installer}.up.sql`)
        .filter((d) => d.kind === 'procedure' && d.name === op)
        .pop()!;
      const pin = procedurePin(op);
      if (directive.value === null) {
        problems.push(`${installer}.up.sql:${directive.line}: "-- @procedure ${op}" has no pin; write "-- @procedure ${op} sha256=${pin}"`);
      } else if (directive.value !== pin) {
        problems.push(`procedures/oceanbase/${op}.sql changed after ${installer} pinned it: add a new migration with "-- @procedure ${op} sha256=${pin}"`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('every directive line of every MySQL migration parses (no "-- @" line is silently ignored)', () => {
    for (const file of listMigrations('oceanbase')) {
      parseDirectives(file.up, `${file.name}.up.sql`);
      if (file.down) parseDirectives(file.down, `${file.name}.down.sql`);
    }
  });

  test('a migrated MariaDB schema has exactly the catalogue procedures with the catalogue parameters', async () => {
    const fx = await createBackend('mysql');
    try {
      const routines = await fx.query(
        `SELECT ROUTINE_NAME AS name, ROUTINE_TYPE AS type FROM information_schema.ROUTINES
          WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY ROUTINE_NAME`,
      );
      // Compared in JavaScript order (the database's collation orders '_' differently).
      assert.deepEqual(
        routines.map((r) => [String(r.name), r.type]).sort(),
        [...MIGRATED_OPERATIONS].sort().map((op) => [op, 'PROCEDURE']),
      );
      const params = await fx.query(
        `SELECT SPECIFIC_NAME AS routine, PARAMETER_NAME AS name, PARAMETER_MODE AS mode FROM information_schema.PARAMETERS
          WHERE SPECIFIC_SCHEMA = DATABASE() ORDER BY SPECIFIC_NAME, ORDINAL_POSITION`,
      );
      const mismatches: string[] = [];
      for (const op of MIGRATED_OPERATIONS) {
        const installed = params.filter((p) => p.routine === op).map((p) => `${String(p.mode)} ${String(p.name)}`);
        const catalogue = SPECS[op].params.map((p) => `IN p_${p}`);
        if (installed.join(', ') !== catalogue.join(', ')) {
          mismatches.push(`installed ${op}(${installed.join(', ')}) but the catalogue says (${catalogue.join(', ')})`);
        }
      }
      assert.deepEqual(mismatches, []);
    } finally {
      await fx.cleanup();
    }
  });
});
