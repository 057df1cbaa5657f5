/**
 * `apsup mode-switch --to global|dedicated` (RFC 9 "关闭与模式切换", DESIGN.md section 3): the
 * coordinated switch between one 'global' supervisor and one 'artifact:<family>' supervisor per
 * family. Run it after every host of the old mode stopped (or crashed):
 *   - MySQL/OceanBase: refused while a candidate of the old mode holds an unexpired lease (the
 *     message names holder and key); pc_aps_switch_mode re-checks it atomically.
 *   - SQLite: refused while a live runtime host holds the host lock; otherwise the lock is held
 *     for the duration of the switch (no host can start meanwhile) and the old mode's permanent
 *     terms (expires_at NULL, e.g. left by a crash) are invalidated.
 * pc_aps_switch_mode then, in one transaction, invalidates every old-mode key the database holds
 * (also of a family no longer in the module, RFC 9 step 2; generation + 1,
 * holder cleared: every stale worker's next fenced write fails with term_lost) and records the
 * new mode; requests, dirty marks, checkpoints and scans are untouched, so the new mode's
 * supervisors recover them. Starts in the old mode are refused afterwards (mode_mismatch).
 */
import { readSetting } from '../config/settings.ts';
import { HostLockError, acquireSqliteHostLock } from '../runtime/sqlite-host-lock.ts';
import { StoreError } from '../store/errors.ts';
import { openStore } from '../store/open.ts';
import type { RuntimeMode } from '../store/types.ts';
import { readModeLeases } from '../store/mode-leases.ts';

export interface ModeSwitchOptions {
  to: string | undefined;
  /** Accepted for compatibility; the switch reads the old mode's keys from the database. */
  familiesModule?: string;
  json?: boolean;
  env?: NodeJS.ProcessEnv;
}

export async function modeSwitchCommand(options: ModeSwitchOptions): Promise<number> {
  if (options.to !== 'global' && options.to !== 'dedicated') {
    console.error(`apsup: mode-switch needs --to global|dedicated, got ${JSON.stringify(options.to ?? null)}`);
    return 2;
  }
  const to: RuntimeMode = options.to;
  const from: RuntimeMode = to === 'global' ? 'dedicated' : 'global';
  // RFC 9 step 2: every term of the old mode the database holds, not only the keys of the
  // families a module lists (a family removed from it keeps its artifact:<family> key).
  const database = readSetting('DATABASE_URL', options.env ?? process.env);

  let releaseLock: () => void = () => undefined;
  if (database.backend === 'sqlite') {
    try {
      releaseLock = acquireSqliteHostLock(database.file);
    } catch (error) {
      if (error instanceof HostLockError) {
        console.error(`apsup: mode-switch refused: ${error.message}; stop it first`);
        return 2;
      }
      throw error;
    }
  }
  const store = openStore(database);
  try {
    const before = await store.readRuntimeMode();
    const oldLeases = await readModeLeases(store, from);
    const oldKeys = oldLeases.map((l) => l.supervisorKey);
    const live: string[] = [];
    for (const lease of oldLeases) {
      // A permanent SQLite term (no expiry) belongs to a host that is not running: we hold the host lock.
      if (lease.holderId !== null && lease.expiresAt !== null && lease.live) {
        live.push(`${lease.supervisorKey} is held by ${lease.holderId} until ${lease.expiresAt.toISOString()}`);
      }
    }
    if (live.length > 0) {
      console.error(
        `apsup: mode-switch refused: a live candidate of the ${from} mode holds a lease: ${live.join('; ')}. Stop every ${from} host first (or wait for its lease to expire).`,
      );
      return 2;
    }
    let result;
    try {
      result = await store.switchMode(to);
    } catch (error) {
      if (error instanceof StoreError && error.code === 'live_candidate') {
        console.error(`apsup: mode-switch refused: a live candidate of the ${from} mode took a lease meanwhile; stop it first`);
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
    };
    if (options.json) {
      console.log(JSON.stringify(summary, null, 2));
    } else {
      console.log(`mode: ${before.mode ?? '(none recorded)'} -> ${result.mode}`);
      for (const t of summary.invalidated) console.log(`invalidated ${t.supervisorKey}: generation ${t.supervisorGeneration}, holder cleared`);
      if (summary.invalidated.length === 0) console.log(`no term of the ${from} mode in the database: nothing to invalidate`);
      if (before.maintenance) console.log('maintenance window ended: writes, triggers and starts are accepted again');
      console.log(
        `requests, dirty marks and checkpoints kept; start the runtime with ${'POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_SUPERVISOR_MODE'}=${to}`,
      );
    }
    return 0;
  } finally {
    await store.close();
    releaseLock();
  }
}
