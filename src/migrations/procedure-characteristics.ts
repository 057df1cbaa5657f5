/**
 * What a DBA reads in `SHOW PROCEDURE STATUS`: every procedure gets a one-line COMMENT, derived
 * from its file's `-- Purpose:` header, and an explicit SQL SECURITY, applied with ALTER PROCEDURE
 * right after its CREATE (and by migration 0020 to the procedures installed before it), so the
 * procedure files themselves need no change. ALTER PROCEDURE changes no ROUTINE_DEFINITION: the
 * recorded body checksum stays valid (COMPATIBILITY rows 95-97).
 *
 * SQL SECURITY DEFINER: a procedure runs with the privileges of the account that migrated (the
 * schema owner), so the runtime account needs EXECUTE and no write privilege on the supervisor's
 * and the task system's tables: the fence tables have no write path around the procedures
 * (README "Database accounts"; ops/mysql-grants.sql).
 */
// No import of plan.ts (it imports this module): the package keeps no module cycle.

export const PROCEDURE_SQL_SECURITY = 'DEFINER';
/** Longest comment applied (a one-liner; MySQL, MariaDB and OceanBase keep far longer ones). */
export const PROCEDURE_COMMENT_MAX = 160;

/** The first sentence of the file's `-- Purpose:` paragraph, on one line, at most 160 characters. */
export function procedureComment(name: string, fileText: string): string {
  const lines = fileText.split('\n');
  const start = lines.findIndex((l) => /^--\s*Purpose:/.test(l));
  if (start === -1) throw new Error(`procedures/oceanbase/${name}.sql: the header has no "-- Purpose:" line (it becomes the procedure's COMMENT)`);
  const parts = [lines[start].replace(/^--\s*Purpose:\s*/, '')];
  // Continuation lines are indented ("--   ..."); the next header field ("-- Locks:") ends it.
  for (let i = start + 1; i < lines.length && /^--\s{2,}\S/.test(lines[i]); i += 1) parts.push(lines[i].replace(/^--\s+/, ''));
  const text = parts.join(' ').replace(/\s+/g, ' ').trim();
  const sentence = /^(.*?(?<!\b(?:i\.e|e\.g))\.)(\s|$)/.exec(text)?.[1] ?? text;
  if (sentence.length <= PROCEDURE_COMMENT_MAX) return sentence;
  const cut = sentence.slice(0, PROCEDURE_COMMENT_MAX - 3);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 40)).replace(/[\s,:;(]+$/, '')}...`;
}

/** A string literal for the statement: quotes doubled, backslashes dropped (sql_mode keeps escapes on). */
function literal(text: string): string {
  return `'${text.replace(/\\/g, '').replace(/'/g, "''")}'`;
}

/** The ALTER PROCEDURE statement of one procedure, from its file's text. */
export function characteristicsStatement(name: string, fileText: string): { sql: string } {
  return { sql: `ALTER PROCEDURE ${name} COMMENT ${literal(procedureComment(name, fileText))} SQL SECURITY ${PROCEDURE_SQL_SECURITY}` };
}
