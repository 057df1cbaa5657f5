/**
 * `apsup status [--json]`: what the database says about the supervisors, for operators. Reads
 * only (no term is taken, nothing is written), bounded queries only:
 *   - the recorded mode and the maintenance flag (pc_aps_read_runtime_mode);
 *   - per supervisor key of both modes ('global' and 'artifact:<family>' for the families of the
 *     families module): holder, generation, expiry, liveness (pc_aps_read_lease). On SQLite a
 *     permanent term (no expiry) is live only while its host process holds the host lock;
 *   - per family: binding, schedule policy, last checkpoint, next due time (interval: checkpoint
 *     + T, or now when never checked; cron: the next fire after database time), scan generation
 *     and in progress (pc_aps_read_binding_state), owed invocations and ordinary backlog counted
 *     over the partial/flag indexes and capped (pc_aps_read_family_backlog).
 */
import { fencingSummary, resolveSessionAccounts } from '../store/session-accounts.ts';
import fs from 'node:fs';
import path from 'node:path';
import { redactDatabaseUrl } from '../config/database-url.ts';
import type { SchedulePolicyDecl } from '../registry/registration.ts';
import { BACKLOG_COUNT_CAP } from '../store/base-store.ts';
import { openStore } from '../store/open.ts';
import type { BindingState, Store } from '../store/types.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import { buildRuntimeConfig } from '../config/load.ts';
import { requireMigratedSchema } from './schema-check.ts';
import { cronFireAfter } from '../schedule/cron.ts';

export interface StatusOptions {
  familiesModule?: string;
  json?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface SupervisorStatus {
  supervisorKey: string;
  mode: 'global' | 'dedicated';
  holderId: string | null;
  supervisorGeneration: number;
  expiresAt: string | null;
  live: boolean;
}

export interface FamilyStatus {
  family: string;
  binding: string;
  policy: SchedulePolicyDecl;
  lastCheckpointAt: string | null;
  nextDueAt: string | null;
  scanGeneration: number;
  scanInProgress: boolean;
  owedInvocations: number;
  ordinaryBacklog: number;
  /** True when a count reached the cap (the real number is at least that). */
  countCapped: boolean;
}

export interface StatusReport {
  backend: string;
  database: string;
  dbNow: string;
  mode: string | null;
  maintenance: boolean;
  sqliteHost: { pid: number | null; alive: boolean } | null;
  supervisors: SupervisorStatus[];
  families: FamilyStatus[];
  countCap: number;
  /** `apsup status` only: what enforces the fencing of processors' sessions in this environment (issue 40). */
  fencing?: { setup: string; summary: string; problems: string[] };
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The SQLite host lock (src/runtime/sqlite-host-lock.ts), read only. */
function readSqliteHost(file: string): { pid: number | null; alive: boolean } {
  try {
    const pid = Number.parseInt(fs.readFileSync(`${path.resolve(file)}.host.lock`, 'utf8').trim(), 10);
    return Number.isInteger(pid) ? { pid, alive: pidAlive(pid) } : { pid: null, alive: false };
  } catch {
    return { pid: null, alive: false };
  }
}

export function nextDueOf(policy: SchedulePolicyDecl, state: BindingState): Date | null {
  if (policy.kind === 'off') return null;
  if (policy.kind === 'interval') {
    return state.lastScheduleCheckpointAt ? new Date(state.lastScheduleCheckpointAt.getTime() + policy.seconds * 1000) : state.dbNow;
  }
  return cronFireAfter(policy.expression, policy.timezone, state.dbNow);
}

export async function collectStatus(options: StatusOptions): Promise<StatusReport> {
  const { config } = await buildRuntimeConfig({ familiesModule: options.familiesModule, env: options.env, command: 'status' });
  // Reads only: never creates the database, and says what to run on an unmigrated one.
  await requireMigratedSchema(config.database, { command: 'status', allMigrations: false, drift: false });
  const store = openStore(config.database);
  try {
    const report = await statusFromStore(store, config);
    // Read, never created here: `apsup db accounts` or a start creates derived accounts.
    const accounts = await resolveSessionAccounts(config.database, options.env ?? process.env, { provision: false });
    return { ...report, fencing: { setup: accounts.setup, summary: fencingSummary(accounts), problems: accounts.problems } };
  } finally {
    await store.close();
  }
}

/** The report from an open store (`apsup status`, the web console): the read operations above. */
export async function statusFromStore(store: Store, config: RuntimeConfig): Promise<StatusReport> {
  const mode = await store.readRuntimeMode();
  const sqliteHost = config.database.backend === 'sqlite' ? readSqliteHost(config.database.file) : null;
  const keys: Array<[string, 'global' | 'dedicated']> = [
    ['global', 'global'],
    ...config.families.map((f) => [`artifact:${f.registration.family}`, 'dedicated'] as [string, 'dedicated']),
  ];
  const supervisors: SupervisorStatus[] = [];
  for (const [key, keyMode] of keys) {
    const lease = await store.readLease(key);
    // SQLite terms are permanent (no expiry): live only while the host holding the lock runs.
    const live = lease.live && (sqliteHost === null || lease.expiresAt !== null || sqliteHost.alive);
    supervisors.push({
      supervisorKey: key,
      mode: keyMode,
      holderId: lease.holderId,
      supervisorGeneration: lease.supervisorGeneration,
      expiresAt: lease.expiresAt?.toISOString() ?? null,
      live,
    });
  }
  const families: FamilyStatus[] = [];
  for (const f of config.families) {
    const binding = f.registration.bindingName;
    const state = await store.readBindingState(binding);
    const backlog = await store.readFamilyBacklog(binding, BACKLOG_COUNT_CAP);
    families.push({
      family: f.registration.family,
      binding,
      policy: f.schedule,
      lastCheckpointAt: state.lastScheduleCheckpointAt?.toISOString() ?? null,
      nextDueAt: nextDueOf(f.schedule, state)?.toISOString() ?? null,
      scanGeneration: state.scanGeneration,
      scanInProgress: state.scanInProgress,
      owedInvocations: backlog.owedCount,
      ordinaryBacklog: backlog.backlogCount,
      countCapped: backlog.owedCount >= backlog.countCap || backlog.backlogCount >= backlog.countCap,
    });
  }
  return {
    backend: config.database.backend,
    database: redactDatabaseUrl(config.database),
    dbNow: mode.dbNow.toISOString(),
    mode: mode.mode,
    maintenance: mode.maintenance,
    sqliteHost,
    supervisors,
    families,
    countCap: BACKLOG_COUNT_CAP,
  };
}

function policyText(p: SchedulePolicyDecl): string {
  if (p.kind === 'interval') return `interval ${p.seconds}s`;
  if (p.kind === 'cron') return `cron "${p.expression}" ${p.timezone}`;
  return 'off';
}

export function formatStatus(report: StatusReport): string {
  const lines: string[] = [];
  lines.push(`database: ${report.database} (${report.backend}), db time ${report.dbNow}`);
  lines.push(`mode: ${report.mode ?? '(none recorded yet)'}${report.maintenance ? ' [MAINTENANCE]' : ''}`);
  if (report.fencing) lines.push(report.fencing.summary);
  if (report.sqliteHost)
    lines.push(
      `sqlite host: ${report.sqliteHost.pid === null ? 'none' : `pid ${report.sqliteHost.pid} ${report.sqliteHost.alive ? 'running' : 'dead (stale lock)'}`}`,
    );
  lines.push('supervisors:');
  for (const s of report.supervisors) {
    lines.push(
      `  ${s.supervisorKey.padEnd(28)} ${s.live ? 'LIVE' : 'idle'}  holder ${s.holderId ?? '-'}  generation ${s.supervisorGeneration}  expires ${s.expiresAt ?? '-'}`,
    );
  }
  lines.push('families:');
  const n = (v: number) => (v >= report.countCap ? `>=${v}` : String(v));
  for (const f of report.families) {
    lines.push(`  ${f.family} (binding ${f.binding}): ${policyText(f.policy)}; checkpoint ${f.lastCheckpointAt ?? 'never'}; next due ${f.nextDueAt ?? '-'}`);
    lines.push(
      `    scan generation ${f.scanGeneration}${f.scanInProgress ? ' (in progress)' : ''}; owed invocations ${n(f.owedInvocations)}; ordinary backlog ${n(f.ordinaryBacklog)}`,
    );
  }
  return lines.join('\n');
}

export async function statusCommand(options: StatusOptions): Promise<number> {
  const report = await collectStatus(options);
  console.log(options.json ? JSON.stringify(report, null, 2) : formatStatus(report));
  return 0;
}
