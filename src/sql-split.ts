/**
 * Splits a SQL text into statements at top-level semicolons, honouring quotes and comments.
 * Used for the SQLite operation scripts and the MySQL schema migrations (never for stored
 * procedure bodies, which are executed whole).
 */
export function splitSqlStatements(text: string): string[] {
  return splitSqlChunks(text).map(stripSqlComments);
}

/** The statements of a text with their comment lines kept (a comment-only chunk is dropped). */
export function splitSqlChunks(text: string): string[] {
  const statements: string[] = [];
  let current = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    const next = text[i + 1];
    if (ch === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end + 1;
      current += text.slice(i, stop);
      i = stop;
      continue;
    }
    if (ch === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      current += text.slice(i, stop);
      i = stop;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') {
      let j = i + 1;
      while (j < text.length) {
        if (text[j] === ch) {
          if (text[j + 1] === ch) {
            j += 2;
            continue;
          }
          break;
        }
        if (text[j] === '\\' && ch !== '"') {
          j += 2;
          continue;
        }
        j += 1;
      }
      current += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === ';') {
      pushStatement(statements, current);
      current = '';
      i += 1;
      continue;
    }
    current += ch;
    i += 1;
  }
  pushStatement(statements, current);
  return statements;
}

/** Removes comment lines and blank lines; returns '' for a comment-only chunk. */
export function stripSqlComments(sql: string): string {
  return sql
    .split('\n')
    .filter((line) => !/^\s*--/.test(line))
    .join('\n')
    .trim();
}

function pushStatement(list: string[], raw: string): void {
  if (stripSqlComments(raw).length > 0) list.push(raw.trim());
}
