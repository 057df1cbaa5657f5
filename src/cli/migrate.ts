/**
 * `apsup migrate up|down|status|sql|adopt`. Read-only actions (status, sql, adopt --dry-run)
 * never create the database. `sql` refuses wherever `up` would (exit 3 drift, 4 adoption
 * needed, 2 a failed requirement such as the character set); `down` refuses a migration without
 * a down file, and one that drops tables holding rows unless --yes.
 */
import { readSetting } from '../config/settings.ts';
import { AdoptionRequiredError } from '../migrations/adoption-detect.ts';
import { openMigrationDriver, type MigrationDriver } from '../migrations/drivers.ts';
import { Migrator, formatStatus } from '../migrations/migrator.ts';
import { requireExistingDatabase } from '../store/open.ts';
import { adoptCommand, adoptionPlanFor } from './adopt.ts';
import { CliRefusal, EXIT, UsageError } from './errors.ts';

export interface MigrateOptions {
  json: boolean;
  familiesModule?: string;
  source?: string;
  dryRun?: boolean;
  keepLegacy?: boolean;
  jobId?: string;
  yes?: boolean;
  withDemo?: boolean;
  env?: NodeJS.ProcessEnv;
}

async function withMigrator<T>(env: NodeJS.ProcessEnv, readOnly: boolean, fn: (migrator: Migrator, driver: MigrationDriver) => Promise<T>): Promise<T> {
  const target = readSetting('DATABASE_URL', env);
  if (readOnly) requireExistingDatabase(target);
  const driver = await openMigrationDriver(target);
  try {
    return await fn(new Migrator(driver), driver);
  } finally {
    await driver.close();
  }
}

/**
 * MySQL/OceanBase, after `up`: the processors' accounts (derived ones created when this account
 * may; README "Database accounts"). Never fails the migration: a runtime start reports it again.
 */
async function reportAccounts(env: NodeJS.ProcessEnv): Promise<void> {
  const target = readSetting('DATABASE_URL', env);
  if (target.backend !== 'mysql') return;
  const { fencingSummary, resolveSessionAccounts } = await import('../store/session-accounts.ts');
  try {
    const accounts = await resolveSessionAccounts(target, env);
    console.log(`accounts: ${fencingSummary(accounts)}`);
    if (accounts.setup === 'filtered')
      console.log('accounts: create the processor and reader accounts (ops/mysql-grants.sql) or run `apsup db accounts` as an administrator');
  } catch (error) {
    console.log(`accounts: not checked (${(error as Error).message})`);
  }
}

/** Tables a down file drops (DROP TABLE [IF EXISTS] a, b). */
export function droppedTables(downSql: string): string[] {
  const code = downSql.replace(/--[^\n]*/g, '');
  const out: string[] = [];
  for (const m of code.matchAll(/\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?([^;]+)/gi)) {
    for (const name of m[1]!.split(',')) out.push(name.trim().replace(/^[`"]|[`"]$/g, ''));
  }
  return out.filter((n) => /^[A-Za-z0-9_]+$/.test(n));
}

async function down(m: Migrator, driver: MigrationDriver, yes: boolean): Promise<string[]> {
  const status = await m.status();
  const last = status.migrations
    .filter((x) => x.state === 'applied' || x.state === 'modified')
    .map((x) => x.name)
    .sort()
    .at(-1);
  if (last === undefined) return [];
  const file = m.files.find((f) => f.name === last);
  if (file && file.down === null) {
    throw new CliRefusal(
      `migrate down refused: migration ${last} has no down file and cannot be reverted (the schema is unchanged; see README "Migrations")`,
      EXIT.usage,
    );
  }
  if (file?.down && !yes) {
    const holding: string[] = [];
    for (const table of droppedTables(file.down)) {
      if (!(await driver.tableExists(table))) continue;
      const [row] = await driver.read(`SELECT COUNT(*) AS n FROM ${table}`);
      const n = Number(row?.n ?? 0);
      if (n > 0) holding.push(`${table} (${n} rows)`);
    }
    if (holding.length > 0) {
      throw new CliRefusal(
        `migrate down refused: reverting ${last} drops tables that hold rows: ${holding.join(', ')}; run again with --yes to drop them`,
        EXIT.usage,
      );
    }
  }
  return m.down();
}

export async function migrateCommand(action: string | undefined, options: MigrateOptions): Promise<number> {
  const env = options.env ?? process.env;
  switch (action) {
    case 'up':
      return withMigrator(env, false, async (m) => {
        const applied = await m.up({ demo: options.withDemo });
        console.log(applied.length === 0 ? 'nothing to apply' : `applied: ${applied.join(', ')}`);
        if (options.withDemo) console.log('demo tables: installed');
        await reportAccounts(env);
        return EXIT.ok;
      });
    case 'down':
      return withMigrator(env, false, async (m, driver) => {
        const reverted = await down(m, driver, options.yes === true);
        console.log(reverted.length === 0 ? 'nothing to revert' : `reverted: ${reverted.join(', ')}`);
        return EXIT.ok;
      });
    case 'status':
      return withMigrator(env, true, async (m) => {
        const status = await m.status();
        console.log(options.json ? JSON.stringify(status, null, 2) : formatStatus(status));
        return status.drift ? EXIT.drift : EXIT.ok;
      });
    case 'sql':
      return withMigrator(env, true, async (m, driver) => {
        let script: string;
        try {
          script = await m.pendingSql();
        } catch (error) {
          if (!(error instanceof AdoptionRequiredError)) throw error;
          script = `-- ${error.message}\n${await adoptionPlanFor(driver, { familiesModule: options.familiesModule })}`;
        }
        process.stdout.write(script);
        return EXIT.ok;
      });
    case 'adopt':
      return adoptCommand({
        source: options.source,
        familiesModule: options.familiesModule,
        dryRun: options.dryRun,
        keepLegacy: options.keepLegacy,
        jobId: options.jobId,
        json: options.json,
        env,
      });
    default:
      throw new UsageError(
        `migrate needs up, down, status, sql or adopt${action === undefined ? '' : `, got ${JSON.stringify(action)}`} (apsup migrate --help)`,
      );
  }
}
