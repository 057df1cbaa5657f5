/**
 * The session every MySQL/OceanBase connection of ours runs in: READ COMMITTED, UTC, a pinned
 * sql_mode, utf8mb4 and dates as text; the pool that sets it on each new connection, and the
 * check that a connection is fit for the stored logic (MysqlStore verifies it before use).
 */
import type { Connection, Pool } from 'mysql2/promise';
import { requirePackage } from '../../paths.ts';

/**
 * The sql_mode of every connection of the store and of the migration connection (so every
 * procedure is created with it: a routine keeps the sql_mode of its CREATE). Accepted by MySQL 8,
 * MariaDB 10.11 and OceanBase 4.x; without NO_BACKSLASH_ESCAPES, which would break mysql2's
 * client-side escaping of values ('a\'b').
 */
export const MYSQL_SQL_MODE = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';

export const MYSQL_SESSION_SETUP = [
  'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
  "SET time_zone = '+00:00'",
  `SET SESSION sql_mode = '${MYSQL_SQL_MODE}'`,
];

type Queryable = Pick<Connection, 'query'>;

/** The session's isolation level: @@transaction_isolation (MySQL 8, OceanBase) or @@tx_isolation (MariaDB). */
export async function sessionIsolation(conn: Queryable): Promise<string> {
  for (const variable of ['transaction_isolation', 'tx_isolation']) {
    try {
      const [rows] = await conn.query(`SELECT @@SESSION.${variable} AS isolation`);
      return String((rows as Array<{ isolation: unknown }>)[0].isolation);
    } catch (error) {
      if ((error as { errno?: number }).errno !== 1193) throw error; // ER_UNKNOWN_SYSTEM_VARIABLE
    }
  }
  throw new Error('the server reports neither @@transaction_isolation nor @@tx_isolation');
}

/** What is wrong with a connection's session for the stored logic, or null when it is fit. */
export async function sessionProblem(conn: Queryable): Promise<string | null> {
  const isolation = (await sessionIsolation(conn)).toUpperCase().replace(/ /g, '-');
  if (isolation !== 'READ-COMMITTED') return `the connection runs at ${isolation}; the stored logic needs READ COMMITTED`;
  const [rows] = await conn.query('SELECT @@SESSION.sql_mode AS mode');
  const mode = String((rows as Array<{ mode: unknown }>)[0].mode);
  if (/\bNO_BACKSLASH_ESCAPES\b/i.test(mode)) return 'the connection has sql_mode NO_BACKSLASH_ESCAPES, which breaks the escaping of values';
  return null;
}

export interface MysqlConnectionOptions {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

/** mysql2's promise API, loaded with the first MySQL connection (a SQLite process never loads it). */
export function mysql2(): typeof import('mysql2/promise') {
  return requirePackage('mysql2/promise') as typeof import('mysql2/promise');
}

/** The options every connection of ours opens with: dates as text in UTC, one statement per query, utf8mb4. */
export function mysqlConnectionConfig(options: MysqlConnectionOptions) {
  const { host, port, user, password, database } = options;
  return { host, port, user, password, database, dateStrings: true, timezone: 'Z', multipleStatements: false, charset: 'utf8mb4' } as const;
}

export function createMysqlPool(options: MysqlConnectionOptions, connectionLimit = 10): Pool {
  const pool = mysql2().createPool({
    ...mysqlConnectionConfig(options),
    connectionLimit,
    supportBigNumbers: true,
    // No caller stack captured (new Error()) on every query by the promise wrapper: 6.9 % of the
    // host's CPU on the MySQL dispatch path (issue 12 item 3). Errors keep mysql2's own stack.
    trace: false,
  });
  // Queued on each new physical connection before it serves any query; MysqlStore.acquire()
  // verifies the result before the connection serves an operation.
  pool.pool.on('connection', (connection) => {
    for (const sql of MYSQL_SESSION_SETUP) connection.query(sql, () => undefined);
  });
  return pool;
}
