/**
 * `apsup maintenance on|off|status [--json]`: the deployment's maintenance window (RFC 9). Step 1
 * of a mode switch (or any storage maintenance): `on` pauses domain writes (dirty marks) and
 * explicit triggers, which are refused with 'maintenance' (the domain API reports them as
 * unavailable and nothing is half-written: the caller's transaction rolls back), and refuses
 * runtime starts. Stop the old candidates, then `apsup mode-switch`, which ends the window, or
 * `off` when the maintenance was for something else.
 */
import { readSetting } from '../config/settings.ts';
import { openStore } from '../store/open.ts';
import { requireMigratedSchema } from './schema-check.ts';

export async function maintenanceCommand(action: string | undefined, options: { json?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<number> {
  if (action !== 'on' && action !== 'off' && action !== 'status') {
    console.error(`apsup: maintenance needs on, off or status, got ${JSON.stringify(action ?? null)}`);
    return 2;
  }
  const target = readSetting('DATABASE_URL', options.env ?? process.env);
  // Every action needs the schema; status reads only and must not create the database.
  await requireMigratedSchema(target, { command: `maintenance ${action}`, allMigrations: false, drift: false });
  const store = openStore(target);
  try {
    const state = action === 'status' ? { ...(await store.readRuntimeMode()), changed: false } : await store.setMaintenance(action === 'on');
    const report = { maintenance: state.maintenance, changed: state.changed, mode: state.mode, dbNow: state.dbNow.toISOString() };
    if (options.json) console.log(JSON.stringify(report, null, 2));
    else {
      const what = state.maintenance
        ? 'maintenance ON: dirty marks, explicit triggers and runtime starts are refused'
        : 'maintenance off: writes, triggers and starts are accepted';
      console.log(`${what}${action === 'status' || state.changed ? '' : ' (unchanged)'}`);
    }
    return 0;
  } finally {
    await store.close();
  }
}
