/**
 * The attacks of issue 40 as an adversarial processor author would write them, for the MySQL
 * adversarial suites: each runs on a restricted session with no statement check at all (the raw
 * driver connection of a fenced transaction or of a read handle), so only the server decides.
 * Each attack is also run once as the administrator, inside a transaction rolled back, to prove
 * it is a real attack (it executes there) and not a statement the server rejects for its syntax.
 */
import type { Connection, PoolConnection } from 'mysql2/promise';

export interface Attack {
  name: string;
  /** Statements in order on one session; the last is the one that must be refused. */
  sql: string[];
  /** As the administrator it executes (false: a file attack, the server may forbid files to everyone). */
  provenAsAdmin: boolean;
}

/** Privilege errors only: a syntax error would prove nothing. */
export const PRIVILEGE_ERRNOS = new Set([
  1044, // ER_DBACCESS_DENIED_ERROR
  1142, // ER_TABLEACCESS_DENIED_ERROR
  1143, // ER_COLUMNACCESS_DENIED_ERROR
  1227, // ER_SPECIFIC_ACCESS_DENIED_ERROR (FILE, SUPER, ...)
  1370, // ER_PROCACCESS_DENIED_ERROR
  1045, // ER_ACCESS_DENIED_ERROR
]);

const L = 'pc_artifact_processing_leases';
const I = 'pc_artifact_processing_intents';

/** Attacks on a fenced commit's session (the processor account). `db` is the schema. */
export function commitAttacks(db: string, fileDir: string): Attack[] {
  return [
    { name: '/*M! */ UPDATE of the lease (an eternal lease)', sql: [`/*M! UPDATE ${L} SET expires_at = */ (SELECT '2099-01-01')`], provenAsAdmin: true },
    { name: '/*M! */ DELETE of every intent', sql: [`/*M! DELETE FROM ${I} WHERE 1 = */ (SELECT 1)`], provenAsAdmin: true },
    { name: '/*!50000 */ UPDATE of intents', sql: [`/*!50000 UPDATE ${I} SET handled_generation = requested_generation */`], provenAsAdmin: true },
    { name: '/*M!100000 */ DELETE of the task claim control row', sql: ['/*M!100000 DELETE FROM pc_durable_task_control */'], provenAsAdmin: true },
    { name: 'plain UPDATE of the lease', sql: [`UPDATE ${L} SET expires_at = '2099-01-01'`], provenAsAdmin: true },
    { name: 'qualified, backticked UPDATE of intents', sql: [`UPDATE \`${db}\`.\`${I}\` SET handled_generation = requested_generation`], provenAsAdmin: true },
    { name: 'mixed-case, commented DELETE of tasks', sql: ['DeLeTe/**/FROM/* x */pc_durable_tasks WHERE task_id > 0'], provenAsAdmin: true },
    { name: 'DELETE of the intake ordinals', sql: ['DELETE FROM pc_aps_batch_ordinals'], provenAsAdmin: true },
    { name: 'SELECT ... FOR UPDATE on the lease (renewal would wait)', sql: [`SELECT * FROM ${L} FOR UPDATE`], provenAsAdmin: true },
    { name: 'LOCK IN SHARE MODE on intents', sql: [`SELECT * FROM ${I} LOCK IN SHARE MODE`], provenAsAdmin: true },
    { name: 'SELECT INTO @var then write with it', sql: ['SELECT 1 INTO @one', `UPDATE ${I} SET handled_generation = @one`], provenAsAdmin: true },
    { name: 'SET STATEMENT ... FOR UPDATE', sql: [`SET STATEMENT max_statement_time = 0 FOR UPDATE ${L} SET expires_at = '2099-01-01'`], provenAsAdmin: true },
    { name: 'INTO/**/OUTFILE (a server file)', sql: [`SELECT 'x' INTO/**/OUTFILE '${fileDir}/outfile.txt'`], provenAsAdmin: false },
    { name: 'INTO DUMPFILE', sql: [`SELECT 'x' INTO DUMPFILE '${fileDir}/dumpfile.txt'`], provenAsAdmin: false },
    { name: 'LOAD DATA INFILE into intents', sql: [`LOAD DATA INFILE '/etc/hostname' INTO TABLE ${I}`], provenAsAdmin: false },
    { name: 'HANDLER on the lease table', sql: [`HANDLER ${L} OPEN`], provenAsAdmin: true },
    // Another holder's term: the administrator's proof run must not end the test's own term (the procedure commits).
    { name: 'CALL of a supervisor procedure', sql: ["CALL pc_aps_invalidate_term('global', 'h-other', 99)"], provenAsAdmin: true },
    { name: 'CALL of the task claim', sql: ["CALL pc_task_claim('w', 1000, '[]')"], provenAsAdmin: true },
    // The untokened acknowledgement: another scope's request marked handled without running it.
    {
      name: 'CALL of the untokened acknowledgement',
      sql: ["CALL pc_aps_ack_invocation('global', 'h-other', 99, 'adv-binding', 'scope-a', 1, NULL)"],
      provenAsAdmin: true,
    },
    { name: 'hidden DDL (implicit commit)', sql: ['/*M! CREATE TABLE adv_ddl (a INT) */'], provenAsAdmin: false },
    {
      name: 'a trigger that writes intents',
      sql: [`CREATE TRIGGER adv_trg AFTER INSERT ON adv_notes FOR EACH ROW UPDATE ${I} SET handled_generation = 0`],
      provenAsAdmin: false,
    },
    { name: 'a definer view over intents', sql: [`CREATE VIEW adv_view AS SELECT * FROM ${I}`], provenAsAdmin: false },
    { name: 'LOCK TABLES of the lease', sql: [`LOCK TABLES ${L} WRITE`], provenAsAdmin: false },
    { name: 'GRANT to itself', sql: [`GRANT ALL ON \`${db}\`.* TO CURRENT_USER`], provenAsAdmin: false },
    { name: 'the mysql schema', sql: ['SELECT * FROM mysql.user'], provenAsAdmin: true },
  ];
}

/** Attacks on a read handle's session (the reader account, its session set READ ONLY first). */
export function readAttacks(fileDir: string): Attack[] {
  return [
    {
      name: '/*M! */ lifts tx_read_only, then /*M! */ INSERT of a business row',
      sql: ['/*M! SET SESSION tx_read_only = */ (SELECT 0)', "/*M! INSERT INTO adv_notes (note) */ (SELECT 'x')"],
      provenAsAdmin: true,
    },
    {
      name: 'SET SESSION TRANSACTION READ WRITE, then UPDATE',
      sql: ['SET SESSION TRANSACTION READ WRITE', "UPDATE adv_notes SET note = 'y'"],
      provenAsAdmin: true,
    },
    { name: 'INTO/**/OUTFILE', sql: [`SELECT 'x' INTO/**/OUTFILE '${fileDir}/read-outfile.txt'`], provenAsAdmin: false },
    { name: 'SELECT of the lease table', sql: [`SELECT * FROM ${L}`], provenAsAdmin: true },
    { name: 'FOR UPDATE on the lease', sql: [`SELECT * FROM ${L} FOR UPDATE`], provenAsAdmin: true },
    { name: 'CALL of a read procedure', sql: ["CALL pc_aps_read_lease('global')"], provenAsAdmin: true },
    { name: 'LOCK TABLES of a business table', sql: ['LOCK TABLES adv_notes WRITE'], provenAsAdmin: true },
  ];
}

type Conn = Pick<Connection | PoolConnection, 'query'>;

/** Runs an attack; returns the errno of the refused statement, or null when everything executed. */
export async function runAttack(conn: Conn, attack: Attack): Promise<number | null> {
  for (const sql of attack.sql) {
    try {
      await conn.query(sql);
    } catch (error) {
      const errno = (error as { errno?: number }).errno ?? -1;
      return errno;
    }
  }
  return null;
}
