/**
 * Start-up checks of the schema before a command uses it: `run` refuses while a migration is
 * pending or a migration/procedure has drifted (exit 2 / 3); read-only commands refuse an
 * unmigrated database with the command to run instead of a "no such table".
 */
import type { DatabaseTarget } from '../config/database-url.ts';
import { openMigrationDriver } from '../migrations/drivers.ts';
import { MigrationDriftError, Migrator } from '../migrations/migrator.ts';
import { requireExistingDatabase } from '../store/open.ts';
import { CliRefusal, EXIT } from './errors.ts';

export interface SchemaRequirement {
  /** The command, for the message. */
  command: string;
  /** Refuse pending migrations (run) or only a database without any (read-only commands). */
  allMigrations: boolean;
  /** Refuse drift (exit 3). */
  drift: boolean;
}

/** What the check could see: `checked: false` when the account may not read the migration records. */
export interface SchemaCheck {
  checked: boolean;
  reason?: string;
}

/** ER_TABLEACCESS_DENIED_ERROR, ER_COLUMNACCESS_DENIED_ERROR: an EXECUTE-only runtime account (ops/mysql-grants.sql). */
const ACCESS_DENIED = new Set([1142, 1143]);
const HIDDEN = 'this account may not read the migration records (EXECUTE-only runtime account); run apsup migrate status as the owner';

export async function requireMigratedSchema(target: DatabaseTarget, need: SchemaRequirement): Promise<SchemaCheck> {
  requireExistingDatabase(target);
  const driver = await openMigrationDriver(target);
  try {
    let status: Awaited<ReturnType<Migrator['status']>>;
    try {
      status = await new Migrator(driver).status();
    } catch (error) {
      if (!ACCESS_DENIED.has(Number((error as { errno?: number }).errno))) throw error;
      return { checked: false, reason: HIDDEN };
    }
    // MySQL hides the tables an account has no privilege on: an EXECUTE-only runtime account sees
    // no migration record but the installed procedures (their bodies NULL, COMPATIBILITY row 97).
    if (target.backend !== 'sqlite' && status.migrations.every((m) => m.state === 'pending')) {
      const [row] = await driver.read(
        "SELECT COUNT(*) AS n FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE 'pc\\_aps\\_%'",
      );
      if (Number(row?.n ?? 0) > 0) return { checked: false, reason: HIDDEN };
    }
    if (need.drift && status.drift) {
      const migrations = status.migrations.filter((m) => m.state === 'modified' || m.state === 'missing_file').map((m) => `migration ${m.name} ${m.state}`);
      const procedures = status.procedures
        .filter((p) => p.state !== 'ok' && p.state !== 'pending' && p.state !== 'on_demand' && p.state !== 'unreadable')
        .map((p) => `procedure ${p.name} ${p.state}`);
      const triggers = status.triggers.filter((t) => t.state === 'missing').map((t) => `trigger ${t.name} ${t.state}`);
      throw new MigrationDriftError(
        `${need.command} refused: the schema has drifted (${[...migrations, ...procedures, ...triggers].slice(0, 5).join(', ')}); see apsup migrate status`,
      );
    }
    const applied = status.migrations.filter((m) => m.state !== 'pending').length;
    if (applied === 0) throw new CliRefusal(`${need.command}: the database has no supervisor schema yet; run apsup migrate up`, EXIT.usage);
    if (need.allMigrations && status.pending > 0) {
      const pending = status.migrations.filter((m) => m.state === 'pending').map((m) => m.name);
      throw new CliRefusal(`${need.command} refused: ${pending.length} migration(s) pending (${pending.join(', ')}); run apsup migrate up first`, EXIT.usage);
    }
    const unreadable = status.procedures.filter((p) => p.state === 'unreadable').length;
    return unreadable > 0
      ? { checked: false, reason: `${unreadable} procedure bodies are not readable by this account; their drift was not checked` }
      : { checked: true };
  } finally {
    await driver.close();
  }
}
