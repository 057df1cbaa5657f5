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

export async function requireMigratedSchema(target: DatabaseTarget, need: SchemaRequirement): Promise<void> {
  requireExistingDatabase(target);
  const driver = await openMigrationDriver(target);
  try {
    const status = await new Migrator(driver).status();
    if (need.drift && status.drift) {
      const migrations = status.migrations.filter((m) => m.state === 'modified' || m.state === 'missing_file').map((m) => `migration ${m.name} ${m.state}`);
      const procedures = status.procedures
        .filter((p) => p.state !== 'ok' && p.state !== 'pending' && p.state !== 'on_demand')
        .map((p) => `procedure ${p.name} ${p.state}`);
      throw new MigrationDriftError(
        `${need.command} refused: the schema has drifted (${[...migrations, ...procedures].slice(0, 5).join(', ')}); see apsup migrate status`,
      );
    }
    const applied = status.migrations.filter((m) => m.state !== 'pending').length;
    if (applied === 0) throw new CliRefusal(`${need.command}: the database has no supervisor schema yet; run apsup migrate up`, EXIT.usage);
    if (need.allMigrations && status.pending > 0) {
      const pending = status.migrations.filter((m) => m.state === 'pending').map((m) => m.name);
      throw new CliRefusal(`${need.command} refused: ${pending.length} migration(s) pending (${pending.join(', ')}); run apsup migrate up first`, EXIT.usage);
    }
  } finally {
    await driver.close();
  }
}
