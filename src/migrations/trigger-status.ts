/**
 * The triggers the applied MySQL/OceanBase migrations created, checked against the database:
 * since 0028 the claim cap's running count is kept by triggers (ADR T6), so a trigger a DBA
 * dropped is drift (`apsup run` and `apsup tasks worker` refuse to start), as a missing
 * procedure is. Existence is checked, not the body (servers print a trigger body their own way).
 */
import { splitSqlStatements } from '../sql-split.ts';
import type { MigrationFile } from './catalog.ts';

export interface TriggerStatusEntry {
  name: string;
  state: 'ok' | 'pending' | 'missing';
  detail: string;
}

const CREATE = /^CREATE\s+TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?`?([A-Za-z0-9_]+)`?/i;
const DROP = /^DROP\s+TRIGGER\s+(?:IF\s+EXISTS\s+)?`?([A-Za-z0-9_]+)`?/i;

/** Trigger name -> the migration that last created it, replaying the files in order. */
export function expectedTriggers(files: readonly MigrationFile[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of files) {
    for (const sql of splitSqlStatements(file.up)) {
      const created = CREATE.exec(sql);
      if (created) out.set(created[1]!, file.name);
      const dropped = DROP.exec(sql);
      if (dropped) out.delete(dropped[1]!);
    }
  }
  return out;
}

/** Each trigger of the migration files: ok, pending (its migration is not applied) or missing. */
export function triggerStatus(files: readonly MigrationFile[], applied: ReadonlySet<string>, installed: ReadonlySet<string>): TriggerStatusEntry[] {
  const everything = expectedTriggers(files);
  const wanted = expectedTriggers(files.filter((f) => applied.has(f.name)));
  return [...everything.keys()].sort().map((name) => {
    const by = wanted.get(name);
    if (by === undefined) return { name, state: 'pending', detail: `created by pending ${everything.get(name)}` };
    if (!installed.has(name)) return { name, state: 'missing', detail: `created by ${by} but absent from the database` };
    return { name, state: 'ok', detail: `created by ${by}` };
  });
}
