/**
 * Row mapping shared by both adapters: both backends return the same column names, times as
 * 'YYYY-MM-DD HH:MM:SS.SSS' text in UTC, and integers.
 */
import type {
  AckResult,
  BindingState,
  FamilyBacklog,
  IntentSnapshot,
  KeyGenerations,
  KeyPage,
  LeaseRead,
  MaintenanceChange,
  ModeSwitchResult,
  RuntimeMode,
  RuntimeModeClaim,
  RuntimeModeState,
  ScanFinish,
  ScanStart,
  TermResult,
} from './types.ts';

export type Row = Record<string, unknown>;

export function dbTime(value: unknown): Date | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return value;
  const text = String(value);
  const iso = text.includes('T') ? text : text.replace(' ', 'T');
  const date = new Date(iso.endsWith('Z') ? iso : `${iso}Z`);
  if (Number.isNaN(date.getTime())) throw new Error(`unexpected database time value ${JSON.stringify(text)}`);
  return date;
}

/** Formats a Date as the UTC text both backends store and compare. */
export function toDbTime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

function int(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && value !== '') return Number(value);
  throw new Error(`expected an integer column, got ${String(value)}`);
}

function intOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : int(value);
}

function must(value: Date | null, column: string): Date {
  if (!value) throw new Error(`column ${column} is unexpectedly NULL`);
  return value;
}

export function toTermResult(row: Row): TermResult {
  return {
    supervisorKey: String(row.supervisor_key),
    holderId: row.holder_id === null || row.holder_id === undefined ? null : String(row.holder_id),
    supervisorGeneration: int(row.supervisor_generation),
    expiresAt: dbTime(row.expires_at),
    outcome: String(row.outcome) as TermResult['outcome'],
    dbNow: must(dbTime(row.db_now), 'db_now'),
  };
}

export function toLeaseRead(row: Row): LeaseRead {
  return {
    supervisorKey: String(row.supervisor_key),
    holderId: row.holder_id === null || row.holder_id === undefined ? null : String(row.holder_id),
    supervisorGeneration: int(row.supervisor_generation),
    expiresAt: dbTime(row.expires_at),
    live: int(row.live) === 1,
    dbNow: must(dbTime(row.db_now), 'db_now'),
  };
}

export function toIntent(row: Row): IntentSnapshot {
  return {
    bindingName: String(row.binding_name),
    scopeId: String(row.scope_id),
    pendingSequence: int(row.pending_sequence),
    dirtyGeneration: int(row.dirty_generation),
    cleanGeneration: int(row.clean_generation),
    requestedGeneration: int(row.requested_generation),
    handledGeneration: int(row.handled_generation),
    lastAutoScanGeneration: int(row.last_auto_scan_generation),
  };
}

export function toKey(row: Row): KeyGenerations {
  return {
    scopeId: String(row.scope_id),
    pendingSequence: int(row.pending_sequence),
    requestedGeneration: int(row.requested_generation),
    handledGeneration: int(row.handled_generation),
    dirtyGeneration: int(row.dirty_generation),
    cleanGeneration: int(row.clean_generation),
  };
}

/** A page in pending_sequence order; a short page means the range is exhausted. */
export function toKeyPage(rows: Row[], afterSequence: number, limit: number): KeyPage {
  const keys = rows.map(toKey).sort((a, b) => a.pendingSequence - b.pendingSequence);
  const last = keys.length > 0 ? keys[keys.length - 1].pendingSequence : afterSequence;
  return { keys, nextAfterSequence: last, exhausted: keys.length < limit };
}

/** An admission page: the SQL reports the cursor and whether the scan range is exhausted. */
export function toAdmittedPage(summary: Row, rows: Row[], afterSequence: number): KeyPage {
  const keys = rows.map(toKey).sort((a, b) => a.pendingSequence - b.pendingSequence);
  const next = intOrNull(summary.next_after_sequence);
  return { keys, nextAfterSequence: next ?? afterSequence, exhausted: int(summary.exhausted) === 1 };
}

export function toBindingState(row: Row): BindingState {
  return {
    bindingName: String(row.binding_name),
    lastScheduleCheckpointAt: dbTime(row.last_schedule_checkpoint_at),
    scanGeneration: int(row.scan_generation),
    scanInProgress: int(row.scan_in_progress) === 1,
    scanUpperPendingSequence: intOrNull(row.scan_upper_pending_sequence),
    scanStartedAt: dbTime(row.scan_started_at),
    scanFinishedAt: dbTime(row.scan_finished_at),
    dbNow: must(dbTime(row.db_now), 'db_now'),
  };
}

export function toScanStart(row: Row): ScanStart {
  return {
    bindingName: String(row.binding_name),
    outcome: String(row.outcome) as ScanStart['outcome'],
    scanGeneration: int(row.scan_generation),
    scanUpperPendingSequence: intOrNull(row.scan_upper_pending_sequence),
    scanInProgress: int(row.scan_in_progress) === 1,
    lastScheduleCheckpointAt: dbTime(row.last_schedule_checkpoint_at),
    nextDueAt: dbTime(row.next_due_at),
    dbNow: must(dbTime(row.db_now), 'db_now'),
  };
}

export function toScanFinish(row: Row): ScanFinish {
  return {
    bindingName: String(row.binding_name),
    outcome: String(row.outcome) as ScanFinish['outcome'],
    scanGeneration: int(row.scan_generation),
    lastScheduleCheckpointAt: dbTime(row.last_schedule_checkpoint_at),
    dbNow: must(dbTime(row.db_now), 'db_now'),
  };
}

export function toAckResult(row: Row): AckResult {
  return {
    bindingName: String(row.binding_name),
    scopeId: String(row.scope_id),
    outcome: String(row.outcome) as AckResult['outcome'],
    requestedGeneration: int(row.requested_generation),
    handledGeneration: int(row.handled_generation),
    dirtyGeneration: int(row.dirty_generation),
    cleanGeneration: int(row.clean_generation),
  };
}

export function single(rows: Row[], operation: string): Row {
  if (rows.length !== 1) throw new Error(`${operation}: expected exactly one result row, got ${rows.length}`);
  return rows[0];
}

function modeOf(value: unknown): RuntimeMode | null {
  return value === 'global' || value === 'dedicated' ? value : null;
}

function mustTime(value: unknown, column: string): Date {
  const date = dbTime(value);
  if (!date) throw new Error(`column ${column} is unexpectedly NULL`);
  return date;
}

export function toRuntimeModeState(row: Row): RuntimeModeState {
  return { mode: modeOf(row.mode), maintenance: Number(row.maintenance) === 1, dbNow: mustTime(row.db_now, 'db_now') };
}

export function toRuntimeModeClaim(row: Row, requested: RuntimeMode): RuntimeModeClaim {
  return {
    mode: modeOf(row.mode) ?? requested,
    maintenance: Number(row.maintenance) === 1,
    outcome: String(row.outcome) as RuntimeModeClaim['outcome'],
    dbNow: mustTime(row.db_now, 'db_now'),
  };
}

/** pc_aps_switch_mode's two result sets: the new mode, then one row per invalidated term. */
export function toModeSwitch(head: Row, invalidated: Row[], toMode: RuntimeMode): ModeSwitchResult {
  return { mode: modeOf(head.mode) ?? toMode, invalidated: invalidated.map((r) => toTermResult(r)), dbNow: mustTime(head.db_now, 'db_now') };
}

export function toMaintenanceChange(row: Row): MaintenanceChange {
  return {
    mode: modeOf(row.mode),
    maintenance: Number(row.maintenance) === 1,
    changed: Number(row.changed) > 0,
    dbNow: mustTime(row.db_now, 'db_now'),
  };
}

export function toFamilyBacklog(row: Row, bindingName: string, countCap: number): FamilyBacklog {
  return { bindingName, owedCount: Number(row.owed_count), backlogCount: Number(row.backlog_count), countCap, dbNow: mustTime(row.db_now, 'db_now') };
}
