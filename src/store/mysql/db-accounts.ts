/**
 * The restricted accounts processors and task handlers run on (issue 40, README "Database
 * accounts"): `processor` (their fenced commits: EXECUTE on the few procedures a commit needs,
 * DML on the business tables) and `reader` (their read handles: SELECT on the business tables).
 * Neither has a privilege on a supervisor table (own-tables.ts) nor a global one (FILE, SUPER,
 * PROCESS ...), so the server refuses whatever a statement's text hides. With one privileged URL
 * these accounts are derived: created here with random passwords kept in
 * pc_aps_derived_accounts, which only that URL can read. What an account may do is read back from
 * information_schema (inspectAccount), never assumed.
 */
import crypto from 'node:crypto';
import type { Connection, Pool, PoolConnection } from 'mysql2/promise';
import { isOwnTable, OWN_TABLES } from '../own-tables.ts';

type Queryable = Pick<Connection | Pool | PoolConnection, 'query'>;

/** What a worker child and a task worker child call on their store (their fenced commit included). */
export const PROCESSOR_PROCEDURES = [
  'pc_aps_read_intent',
  'pc_aps_read_binding_state',
  'pc_aps_begin_fenced',
  'pc_aps_ack_invocation_token',
  'pc_task_assert_attempt',
  'pc_task_heartbeat',
  'pc_task_progress',
  'pc_task_complete',
  'pc_task_fail',
  'pc_task_finish_cancelled',
  'pc_task_is_active',
] as const;

export type SessionRole = 'processor' | 'reader';

export interface AccountCredentials {
  role: SessionRole;
  user: string;
  password: string;
}

const ER_NO_SUCH_TABLE = 1146;
const ER_TABLEACCESS_DENIED = 1142;

/** `aps_p_<16 hex>` / `aps_r_<16 hex>` of the schema: within MySQL 8's 32-character user names. */
export function derivedUserName(role: SessionRole, schema: string): string {
  const hash = crypto.createHash('sha256').update(schema).digest('hex').slice(0, 16);
  return `aps_${role === 'processor' ? 'p' : 'r'}_${hash}`;
}

const quoteIdent = (name: string) => `\`${name.replace(/`/g, '``')}\``;

/** The derived accounts recorded for this schema, or null when the table is absent or not readable. */
export async function readDerivedAccounts(conn: Queryable): Promise<AccountCredentials[] | null> {
  try {
    const [rows] = await conn.query('SELECT role, user_name, password FROM pc_aps_derived_accounts ORDER BY role');
    return (rows as Array<{ role: SessionRole; user_name: string; password: string }>).map((r) => ({ role: r.role, user: r.user_name, password: r.password }));
  } catch (error) {
    const errno = (error as { errno?: number }).errno;
    if (errno === ER_NO_SUCH_TABLE || errno === ER_TABLEACCESS_DENIED) return null;
    throw error;
  }
}

/**
 * Base tables of the schema that belong to the business (not the supervisor's). Never views: a
 * view is its definer's door to the tables it reads (an updatable view over a pc_* table, FOR
 * UPDATE through it); a DBA grants a view by hand, knowing what it reads.
 */
export async function businessTables(conn: Queryable, schema: string): Promise<string[]> {
  const [rows] = await conn.query(
    "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
    [schema],
  );
  return (rows as Array<{ name: string }>).map((r) => String(r.name)).filter((name) => !isOwnTable(name));
}

/** GRANT statements of one restricted account: its procedures (processor) and the business tables. */
export function grantStatements(role: SessionRole, user: string, schema: string, tables: readonly string[]): string[] {
  const who = `'${user}'@'%'`;
  const db = quoteIdent(schema);
  const out: string[] = [];
  if (role === 'processor') for (const p of PROCESSOR_PROCEDURES) out.push(`GRANT EXECUTE ON PROCEDURE ${db}.${p} TO ${who}`);
  const privileges = role === 'processor' ? 'SELECT, INSERT, UPDATE, DELETE' : 'SELECT';
  for (const t of tables) out.push(`GRANT ${privileges} ON ${db}.${quoteIdent(t)} TO ${who}`);
  return out;
}

/**
 * Creates the two derived accounts of the schema (or brings them back to the recorded password)
 * and grants them what they need, then the business tables present now. Needs an account that
 * may CREATE USER and GRANT (the quick path's administrator). Race-free between hosts starting at
 * once: the first INSERT of a role's row decides its password (the primary key), everyone then
 * sets the account to the recorded one.
 */
export async function provisionDerivedAccounts(conn: Queryable, schema: string): Promise<AccountCredentials[]> {
  const out: AccountCredentials[] = [];
  for (const role of ['processor', 'reader'] as const) {
    await conn.query(
      // `role = role`: keep the recorded row (COMPATIBILITY row 16: no VALUES()).
      'INSERT INTO pc_aps_derived_accounts (role, user_name, password, created_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE role = role',
      [role, derivedUserName(role, schema), crypto.randomBytes(32).toString('base64url')],
    );
    const [rows] = await conn.query('SELECT user_name, password FROM pc_aps_derived_accounts WHERE role = ?', [role]);
    const { user_name: user, password } = (rows as Array<{ user_name: string; password: string }>)[0]!;
    if (!/^[A-Za-z0-9_]{1,32}$/.test(user)) throw new Error(`pc_aps_derived_accounts holds an invalid user name for ${role}`);
    await conn.query(`CREATE USER IF NOT EXISTS '${user}'@'%' IDENTIFIED BY ?`, [password]);
    await conn.query(`ALTER USER '${user}'@'%' IDENTIFIED BY ?`, [password]);
    out.push({ role, user, password });
  }
  await revokeFormerGrants(conn, schema, out);
  await syncBusinessGrants(conn, schema, out);
  return out;
}

/** Procedures an earlier release granted the processor account and this one does not. */
const FORMER_PROCESSOR_PROCEDURES = ['pc_aps_ack_invocation'];

async function revokeFormerGrants(conn: Queryable, schema: string, accounts: readonly AccountCredentials[]): Promise<void> {
  for (const a of accounts) {
    if (a.role !== 'processor') continue;
    for (const p of FORMER_PROCESSOR_PROCEDURES) {
      await conn.query(`REVOKE EXECUTE ON PROCEDURE ${quoteIdent(schema)}.${p} FROM '${a.user}'@'%'`).catch((error: unknown) => {
        // ER_NONEXISTING_PROC_GRANT: it had none.
        if ((error as { errno?: number }).errno !== 1403) throw error;
      });
    }
  }
}

/** Grants the business tables present now to the derived accounts (tables created later: at the next start). */
export async function syncBusinessGrants(conn: Queryable, schema: string, accounts: readonly AccountCredentials[]): Promise<number> {
  const tables = await businessTables(conn, schema);
  let n = 0;
  for (const a of accounts) {
    for (const sql of grantStatements(a.role, a.user, schema, tables)) {
      await conn.query(sql);
      n += 1;
    }
  }
  return n;
}

export interface AccountFacts {
  /** CURRENT_USER() as the server resolved it. */
  account: string;
  /** What lets this account write, lock or read a supervisor table or a server file; empty: none. */
  problems: string[];
}

/**
 * What the connection's account may do, as the server reports it (information_schema lists the
 * current account's own privileges without extra rights): a global privilege other than USAGE,
 * any schema-wide privilege on the schema, or a table privilege on a supervisor table is a
 * problem; a processor may EXECUTE only PROCESSOR_PROCEDURES.
 */
export async function inspectAccount(conn: Queryable, schema: string, role: SessionRole): Promise<AccountFacts> {
  const [[who]] = (await conn.query('SELECT CURRENT_USER() AS account')) as unknown as [[{ account: string }]];
  const grantee = quotedGrantee(String(who.account));
  const problems: string[] = [];
  const [globals] = await conn.query("SELECT PRIVILEGE_TYPE AS p FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ? AND PRIVILEGE_TYPE <> 'USAGE'", [
    grantee,
  ]);
  for (const r of globals as Array<{ p: string }>) problems.push(`global ${r.p}`);
  const [schemas] = await conn.query('SELECT TABLE_SCHEMA AS s, PRIVILEGE_TYPE AS p FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ?', [grantee]);
  for (const r of schemas as Array<{ s: string; p: string }>) {
    // A schema-wide grant covers the supervisor's tables too; on another schema it is not ours to judge.
    if (schemaPatternMatches(String(r.s), schema)) problems.push(`${r.p} on schema ${r.s}`);
  }
  const [tables] = await conn.query(
    'SELECT TABLE_NAME AS t, PRIVILEGE_TYPE AS p FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?',
    [grantee, schema],
  );
  for (const r of tables as Array<{ t: string; p: string }>) {
    if (isOwnTable(String(r.t))) problems.push(`${r.p} on ${r.t}`);
    else if (role === 'reader' && r.p !== 'SELECT') problems.push(`${r.p} on ${r.t} (a reader only reads)`);
  }
  const [columns] = await conn.query(
    'SELECT DISTINCT TABLE_NAME AS t, PRIVILEGE_TYPE AS p FROM information_schema.COLUMN_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?',
    [grantee, schema],
  );
  for (const r of columns as Array<{ t: string; p: string }>) {
    if (isOwnTable(String(r.t))) problems.push(`${r.p} on columns of ${r.t}`);
    else if (role === 'reader' && r.p !== 'SELECT') problems.push(`${r.p} on columns of ${r.t} (a reader only reads)`);
  }
  // A view is its definer's door to what it reads: granted business objects must be base tables.
  const [views] = await conn.query(
    "SELECT DISTINCT p.TABLE_NAME AS t FROM information_schema.TABLE_PRIVILEGES p JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = p.TABLE_SCHEMA AND t.TABLE_NAME = p.TABLE_NAME WHERE p.GRANTEE = ? AND p.TABLE_SCHEMA = ? AND t.TABLE_TYPE <> 'BASE TABLE'",
    [grantee, schema],
  );
  for (const r of views as Array<{ t: string }>) problems.push(`a privilege on the view ${r.t} (grant base tables only)`);
  problems.push(...(await roleProblems(conn)));
  problems.push(...(await probeOwnTables(conn)));
  if (role === 'reader') {
    const [procs] = await conn.query('SELECT ROUTINE_NAME AS n FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?', [schema]);
    // information_schema.ROUTINES lists only the routines the account may execute (or owns).
    for (const r of procs as Array<{ n: string }>) problems.push(`EXECUTE on ${r.n} (a reader calls no procedure)`);
  } else {
    const allowed = new Set<string>(PROCESSOR_PROCEDURES);
    const [procs] = await conn.query('SELECT ROUTINE_NAME AS n FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?', [schema]);
    for (const r of procs as Array<{ n: string }>) if (!allowed.has(String(r.n))) problems.push(`EXECUTE on ${r.n}`);
  }
  return { account: String(who.account), problems };
}

/** Roles (granted, default or mandatory) bring privileges the views above do not show: refused. */
async function roleProblems(conn: Queryable): Promise<string[]> {
  const out: string[] = [];
  try {
    const [roles] = await conn.query('SELECT ROLE_NAME AS r FROM information_schema.APPLICABLE_ROLES');
    for (const r of roles as Array<{ r: string }>) out.push(`the role ${r.r} (grant privileges directly, not through roles)`);
  } catch (error) {
    if ((error as { errno?: number }).errno !== 1109) throw error; // ER_UNKNOWN_TABLE: no roles view here
  }
  try {
    const [[m]] = (await conn.query('SELECT @@mandatory_roles AS m')) as unknown as [[{ m: unknown }]];
    if (String(m.m ?? '').trim() !== '') out.push(`mandatory roles ${String(m.m)}`);
  } catch (error) {
    if ((error as { errno?: number }).errno !== 1193) throw error; // MariaDB, OceanBase: no mandatory roles
  }
  return out;
}

/** A column each probe of an UPDATE names (the fence-critical tables). */
const PROBE_COLUMNS: Record<string, string> = {
  pc_artifact_processing_leases: 'expires_at',
  pc_artifact_processing_intents: 'handled_generation',
  pc_artifact_processing_fence_slots: 'fence_slot',
  pc_artifact_processing_lease_fences: 'supervisor_generation',
  pc_durable_tasks: 'state',
  pc_durable_task_control: 'name',
  pc_aps_invocation_secret: 'secret',
  pc_aps_derived_accounts: 'password',
};

/**
 * The server's own answer, whatever granted it (PUBLIC, a default role the views do not list):
 * SELECT, DELETE and (fence-critical tables) UPDATE of each supervisor table, with an impossible
 * WHERE in a transaction rolled back. Any one that is not refused is a problem.
 */
async function probeOwnTables(conn: Queryable): Promise<string[]> {
  const out: string[] = [];
  const refused = (errno: number | undefined) => errno === 1142 || errno === 1143 || errno === 1146;
  for (const t of OWN_TABLES) {
    const probes = [`SELECT 1 FROM ${t} WHERE 1 = 0`, `DELETE FROM ${t} WHERE 1 = 0`];
    // A constant, not the column itself: reading it would need SELECT, and UPDATE alone writes.
    if (PROBE_COLUMNS[t]) probes.push(`UPDATE ${t} SET ${PROBE_COLUMNS[t]} = NULL WHERE 1 = 0`);
    for (const sql of probes) {
      await conn.query('START TRANSACTION');
      try {
        await conn.query(sql);
        out.push(`the server allows ${sql.split(' ')[0]} on ${t}`);
      } catch (error) {
        // Anything but a refusal (an unknown column, say) means the privilege check passed.
        if (!refused((error as { errno?: number }).errno)) out.push(`the server does not refuse ${sql.split(' ')[0]} on ${t}`);
      } finally {
        await conn.query('ROLLBACK');
      }
    }
  }
  return out;
}

/** A schema-level grant's name is a LIKE pattern (`%`, `_`, backslash escapes): does it cover schema? */
export function schemaPatternMatches(pattern: string, schema: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && i + 1 < pattern.length) re += (pattern[++i] as string).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '%') re += '.*';
    else if (c === '_') re += '.';
    else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i').test(schema);
}

/** 'user@host' as CURRENT_USER() prints it → "'user'@'host'" as information_schema's GRANTEE. */
export function quotedGrantee(account: string): string {
  const at = account.lastIndexOf('@');
  return `'${account.slice(0, at)}'@'${account.slice(at + 1)}'`;
}
