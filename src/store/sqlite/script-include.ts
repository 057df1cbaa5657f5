/**
 * `-- @include <name>` expansion of the SQLite operation scripts: the line is replaced by the
 * text of sql/sqlite/<name>.sql, itself expanded, so an operation runs another one's statements in
 * its own transaction without a copy. `-- @include <name> <param>=<expression>` also binds one
 * parameter of the included text to an expression of the includer (every `:param` becomes
 * `(<expression>)`), as a MySQL procedure passes an argument. A cycle, a missing script, an
 * included script that owns a transaction, a bound parameter the included text does not use, or
 * any other `-- @include` line left unexpanded (a typo, a bad name) is an error. An included
 * script holding a `-- @done-if-rows` fast path (script.ts) ends its includer when it writes, so
 * it must be the includer's last statements (only COMMIT may follow).
 */
import { stripSqlComments } from '../../sql-split.ts';

const INCLUDE = /^--\s*@include\s+([a-z0-9_]+)(?:\s+([a-z_][a-z0-9_]*)=(\S.*?))?\s*$/gm;
const ANY_INCLUDE = /^.*--\s*@include\b.*$/m;
/** The line marking a fast path (script.ts): alone on its line, so text that names it is no marker. */
export const DONE_IF_ROWS = /^\s*--\s*@done-if-rows\s*$/m;

export function expandIncludes(name: string, read: (name: string) => string, stack: string[] = []): string {
  if (stack.includes(name)) throw new Error(`sql/sqlite: @include cycle ${[...stack, name].join(' -> ')}`);
  const chain = [...stack, name];
  let text: string;
  try {
    text = read(name);
  } catch (error) {
    const from = stack.length > 0 ? ` (included by ${stack[stack.length - 1]})` : '';
    throw new Error(`sql/sqlite/${name}.sql cannot be read${from}: ${(error as Error).message}`);
  }
  const expanded = text.replace(INCLUDE, (line: string, other: string, param: string | undefined, expression: string | undefined, offset: number) => {
    const included = expandIncludes(other, read, chain);
    if (/^\s*(BEGIN|COMMIT)\b/im.test(included)) throw new Error(`sql/sqlite/${name}.sql includes ${other}, which owns a transaction`);
    const rest = text.slice(offset + line.length);
    if (
      DONE_IF_ROWS.test(included) &&
      (ANY_INCLUDE.test(rest) ||
        stripSqlComments(rest)
          .replace(/^\s*COMMIT\s*;?\s*$/im, '')
          .trim() !== '')
    ) {
      throw new Error(`sql/sqlite/${name}.sql: statements follow the include of ${other}, whose -- @done-if-rows fast path would skip them`);
    }
    if (param === undefined || expression === undefined) return included;
    const uses = included.split(new RegExp(`:${param}\\b`));
    if (uses.length === 1) throw new Error(`sql/sqlite/${name}.sql binds :${param}, which ${other} does not use`);
    return uses.join(`(${expression})`);
  });
  const left = ANY_INCLUDE.exec(expanded);
  if (left) throw new Error(`sql/sqlite/${name}.sql: unexpanded include line ${JSON.stringify(left[0].trim())} (expected "-- @include <name>")`);
  return expanded;
}
