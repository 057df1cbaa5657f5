/**
 * The MySQL/OceanBase procedures checked against their files, their ledger rows and the database
 * (`apsup migrate status`): a body changed by hand, a file changed without a migration, a missing
 * procedure are drift; an adoption's procedure is installed on demand.
 */
import { directives, listProcedureFiles, procedureText, PROCEDURE_LEDGER_TABLE, sha256, type MigrationFile } from './catalog.ts';
import type { MigrationDriver } from './drivers.ts';
import { OPERATIONS, type OperationSpec } from '../store/operations.ts';

export interface ProcedureStatusEntry {
  name: string;
  state: 'ok' | 'pending' | 'on_demand' | 'unreadable' | 'file_changed' | 'definition_changed' | 'missing' | 'no_migration';
  detail: string;
}

function isAdoptionProcedure(name: string): boolean {
  const spec = (OPERATIONS as Record<string, OperationSpec>)[name];
  return spec?.installedBy === 'adoption';
}

export async function procedureStatus(
  driver: MigrationDriver,
  files: readonly MigrationFile[],
  appliedNames: Set<string>,
  proceduresRoot?: string,
): Promise<ProcedureStatusEntry[]> {
  const recorded = new Map(((await driver.tableExists(PROCEDURE_LEDGER_TABLE)) ? await driver.recordedProcedures() : []).map((p) => [p.name, p]));
  const installed = await driver.installedProcedures();
  const installers = new Map<string, string[]>();
  for (const file of files) {
    for (const name of directives(file.up, 'procedure')) installers.set(name, [...(installers.get(name) ?? []), file.name]);
  }
  const names = new Set([...listProcedureFiles(proceduresRoot), ...recorded.keys()]);
  const result: ProcedureStatusEntry[] = [];
  for (const name of [...names].sort()) {
    const record = recorded.get(name);
    const migrationsForIt = installers.get(name) ?? [];
    if (!record) {
      if (migrationsForIt.length === 0 && isAdoptionProcedure(name)) {
        result.push({ name, state: 'on_demand', detail: 'installed by `apsup migrate adopt` right before it runs, dropped afterwards' });
      } else if (migrationsForIt.length === 0) {
        result.push({ name, state: 'no_migration', detail: 'procedure file exists but no migration installs it' });
      } else {
        result.push({
          name,
          state: 'pending',
          detail: `installed by pending ${migrationsForIt.filter((m) => !appliedNames.has(m)).join(', ') || migrationsForIt.join(', ')}`,
        });
      }
      continue;
    }
    let fileChecksum: string | null = null;
    try {
      fileChecksum = sha256(procedureText(name, proceduresRoot));
    } catch {
      fileChecksum = null;
    }
    const body = installed.get(name);
    if (body === undefined) {
      result.push({ name, state: 'missing', detail: `recorded as installed by ${record.migrationName} but absent from the database` });
    } else if (body === null) {
      result.push({
        name,
        state: 'unreadable',
        detail: 'this account may not read routine bodies (grant SELECT ON mysql.proc / SHOW_ROUTINE, or check as the owner)',
      });
    } else if (record.definitionChecksum !== null && body !== record.definitionChecksum) {
      result.push({
        name,
        state: 'definition_changed',
        detail: 'the installed body differs from the one installed by the migration (changed outside migrations)',
      });
    } else if (fileChecksum !== record.fileChecksum) {
      const pendingReinstall = migrationsForIt.some((m) => !appliedNames.has(m));
      result.push({
        name,
        state: pendingReinstall ? 'pending' : 'file_changed',
        detail: pendingReinstall
          ? 'file changed; a pending migration reinstalls it'
          : fileChecksum === null
            ? 'procedure file was removed'
            : 'file differs from the installed version; ship it through a new migration',
      });
    } else {
      result.push({ name, state: 'ok', detail: `installed by ${record.migrationName}` });
    }
  }
  return result;
}
