/**
 * `apsup mode-switch --to global|dedicated` (RFC 9 "关闭与模式切换", DESIGN.md section 3): the
 * coordinated switch between one 'global' supervisor and one 'artifact:<family>' supervisor per
 * family. Run it after every host of the old mode stopped (or crashed):
 *   - MySQL/OceanBase: refused while a candidate of the old mode holds an unexpired lease (the
 *     message names holder and key); pc_aps_switch_mode re-checks it atomically.
 *   - SQLite: refused while a live runtime host holds the host lock; otherwise the lock is held
 *     for the duration of the switch (no host can start meanwhile) and the old mode's permanent
 *     terms (expires_at NULL, e.g. left by a crash) are invalidated.
 * pc_aps_switch_mode then, in one transaction, invalidates every old-mode key (generation + 1,
 * holder cleared: every stale worker's next fenced write fails with term_lost) and records the
 * new mode; requests, dirty marks, checkpoints and scans are untouched, so the new mode's
 * supervisors recover them. Starts in the old mode are refused afterwards (mode_mismatch).
 */
import { ConfigError } from '../config/database-url.ts';
import { HostLockError, acquireSqliteHostLock } from '../runtime/sqlite-host-lock.ts';
import { StoreError } from '../store/errors.ts';
import { openStore } from '../store/open.ts';
import type { RuntimeMode } from '../store/types.ts';
import { buildRuntimeConfig } from './run.ts';

export interface ModeSwitchOptions {
  to: string | undefined;
  familiesModule?: string;
  json?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** The supervisor keys a mode uses for the registered families. */
export function supervisorKeysOf(mode: RuntimeMode, families: readonly string[]): string[] {
  return mode === 'global' ? ['global'] : families.map((f) => `artifact:${f}`);
}

export async function modeSwitchCommand(options: ModeSwitchOptions): Promise<number> {
  if (options.to !== 'global' && options.to !== 'dedicated') {
    console.error(`apsup: mode-switch needs --to global|dedicated, got ${JSON.stringify(options.to ?? null)}`);
    return 2;
  }
  const to: RuntimeMode = options.to;
  const from: RuntimeMode = to === 'global' ? 'dedicated' : 'global';
  const env = { ...(options.env ?? process.env), POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_SUPERVISOR_MODE: to };
  const { config } = await buildRuntimeConfig({ familiesModule: options.familiesModule, env, command: 'mode-switch' });
  const families = config.families.map((f) => f.registration.family);
  const oldKeys = supervisorKeysOf(from, families);
  if (oldKeys.length === 0) throw new ConfigError('the families module registers no family: nothing to switch');

  let releaseLock: () => void = () => undefined;
  if (config.database.backend === 'sqlite') {
    try {
      releaseLock = acquireSqliteHostLock(config.database.file);
    } catch (error) {
      if (error instanceof HostLockError) {
        console.error(`apsup: mode-switch refused: ${error.message}; stop it first`);
        return 2;
      }
      throw error;
    }
  }
  const store = openStore(config.database);
  try {
    const before = await store.readRuntimeMode();
    const live: string[] = [];
    for (const key of oldKeys) {
      const lease = await store.readLease(key);
      // A permanent SQLite term (no expiry) belongs to a host that is not running: we hold the host lock.
      if (lease.holderId !== null && lease.expiresAt !== null && lease.live) {
        live.push(`${key} is held by ${lease.holderId} until ${lease.expiresAt.toISOString()}`);
      }
    }
    if (live.length > 0) {
      console.error(`apsup: mode-switch refused: a live candidate of the ${from} mode holds a lease: ${live.join('; ')}. Stop every ${from} host first (or wait for its lease to expire).`);
      return 2;
    }
    let result;
    try {
      result = await store.switchMode(to, oldKeys);
    } catch (error) {
      if (error instanceof StoreError && error.code === 'live_candidate') {
        console.error(`apsup: mode-switch refused: a live candidate of the ${from} mode took a lease of ${oldKeys.join(', ')} meanwhile; stop it first`);
        return 2;
      }
      throw error;
    }
    const summary = {
      status: 'switched',
      previousMode: before.mode,
      maintenanceEnded: before.maintenance,
      mode: result.mode,
      invalidated: result.invalidated.map((t) => ({ supervisorKey: t.supervisorKey, supervisorGeneration: t.supervisorGeneration })),
      skipped: oldKeys.filter((k) => !result.invalidated.some((t) => t.supervisorKey === k)),
    };
    if (options.json) {
      console.log(JSON.stringify(summary, null, 2));
    } else {
      console.log(`mode: ${before.mode ?? '(none recorded)'} -> ${result.mode}`);
      for (const t of summary.invalidated) console.log(`invalidated ${t.supervisorKey}: generation ${t.supervisorGeneration}, holder cleared`);
      for (const k of summary.skipped) console.log(`skipped ${k}: never used (no term to invalidate)`);
      if (before.maintenance) console.log('maintenance window ended: writes, triggers and starts are accepted again');
      console.log(`requests, dirty marks and checkpoints kept; start the runtime with ${'POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_SUPERVISOR_MODE'}=${to}`);
    }
    return 0;
  } finally {
    await store.close();
    releaseLock();
  }
}
