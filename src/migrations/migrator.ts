/**
 * `apsup migrate up|down|status|sql`: umzug orders and tracks the migrations; the ledger table
 * pc_aps_schema_migrations holds name and checksum of every applied file. Applied migrations are
 * append-only: an applied file whose checksum changed stops `up` with a clear error. On
 * MySQL/OceanBase, installed procedures are compared with their files and with the body recorded
 * at install time, so a drifted database is reported by `status`.
 */
import type { Umzug, UmzugStorage } from 'umzug';
import { MigrationDriftError, demoTables, listMigrations, verifyPins, type MigrationBackend, type MigrationFile, type PlanContext } from './catalog.ts';
import { demoSchemaPlan, ledgerBootstrap as ledgerStatements, planDown, planUp, renderPlan, requirementChecks } from './plan.ts';
import type { MigrationDriver } from './drivers.ts';
import { AdoptionRequiredError, detectUnadoptedBaseline } from './adoption-detect.ts';
import type { PlannedStatement } from './catalog.ts';
import { procedureStatus, type ProcedureStatusEntry } from './procedure-status.ts';
import { triggerStatus, type TriggerStatusEntry } from './trigger-status.ts';

export interface MigrationStatusEntry {
  name: string;
  state: 'applied' | 'pending' | 'modified' | 'missing_file';
  appliedAt?: string;
}

export interface AdoptionStatusEntry {
  adoption: string;
  state: string;
  summary: string;
  convertedAt: string;
  retiredAt: string | null;
}

export interface MigrationStatus {
  backend: MigrationBackend;
  /** Conversions of replaced schedulers (`apsup migrate adopt`), from pc_aps_adoptions. */
  adoptions: AdoptionStatusEntry[];
  migrations: MigrationStatusEntry[];
  procedures: ProcedureStatusEntry[];
  /** MySQL/OceanBase: the triggers of the applied migrations (trigger-status.ts). */
  triggers: TriggerStatusEntry[];
  drift: boolean;
  pending: number;
  /**
   * Demo tables (ref_*) present in the database: installed by `apsup start` / `migrate up
   * --with-demo`, or kept by migration 0020 (SQLite 0013) because they held rows. A production
   * database has none.
   */
  demoTables: string[];
}

export { MigrationDriftError };
export type { ProcedureStatusEntry };

export class Migrator {
  readonly backend: MigrationBackend;
  readonly files: MigrationFile[];
  private readonly context: PlanContext;

  /**
   * @param migrationsRoot folder holding sqlite/ and oceanbase/ (default: the package's migrations/)
   * @param proceduresRoot folder of the procedure files (default: the package's procedures/oceanbase/)
   */
  constructor(
    private readonly driver: MigrationDriver,
    private readonly migrationsRoot?: string,
    private readonly proceduresRoot?: string,
  ) {
    this.backend = driver.backend;
    this.files = listMigrations(this.backend, migrationsRoot);
    this.context = { files: this.files, proceduresRoot };
  }

  private async umzug(): Promise<Umzug> {
    // Loaded for up and down only: every command checks the schema, few change it (CLI start).
    const { Umzug } = await import('umzug');
    const driver = this.driver;
    const storage: UmzugStorage = {
      // The ledger row is written by the migration plan itself (same transaction on SQLite).
      async logMigration() {},
      async unlogMigration() {},
      async executed() {
        return (await driver.applied()).map((m) => m.name);
      },
    };
    return new Umzug({
      migrations: this.files.map((file) => ({
        name: file.name,
        up: async () => driver.execute(planUp(this.backend, file, this.context)),
        down: async () => driver.execute(planDown(this.backend, file)),
      })),
      storage,
      logger: undefined,
    });
  }

  /** The ledger rows, without creating the ledger (none when it does not exist yet). */
  private async appliedRows() {
    return (await this.driver.ledgerExists()) ? this.driver.applied() : [];
  }

  /** Read-only: refuses when an applied migration's file changed or is missing. */
  private async checkAppliedUnchanged(): Promise<void> {
    const byName = new Map(this.files.map((f) => [f.name, f]));
    for (const applied of await this.appliedRows()) {
      const file = byName.get(applied.name);
      if (!file) {
        throw new MigrationDriftError(`migration ${applied.name} is applied in the database but its file is missing from migrations/${this.backend}/`);
      }
      if (file.checksum !== applied.checksum) {
        throw new MigrationDriftError(
          `migration ${applied.name} was modified after it was applied (database ${applied.checksum.slice(0, 12)}, file ${file.checksum.slice(0, 12)}); ` +
            'migrations are append-only: restore the file and add a new migration',
        );
      }
    }
  }

  /**
   * A database that holds a scheduler this runtime replaces (Topic Memory PR #1490) and no
   * migration ledger rows must be adopted, not migrated: `up` would collide with the deployed
   * tables. Refuses with the command to run (adoption.ts).
   */
  private async refuseUnadoptedBaseline(): Promise<void> {
    const baseline = await detectUnadoptedBaseline(this.driver);
    if (baseline) throw new AdoptionRequiredError(baseline);
  }

  /**
   * Before any pending migration runs: every pending one parses, its latest pins match the
   * procedure files, and its `-- @require` lines hold. So a refusal leaves the schema unchanged.
   */
  private async checkPending(to?: string): Promise<void> {
    if (this.backend !== 'oceanbase') return;
    const applied = new Set((await this.appliedRows()).map((m) => m.name));
    for (const file of this.files) {
      if (applied.has(file.name) || (to !== undefined && file.name > to)) continue;
      verifyPins(file, this.context);
      await this.driver.execute(requirementChecks(file));
    }
  }

  /**
   * Applies the pending migrations, or those up to and including `to`; with `demo`, then creates
   * the missing demo tables (`apsup start`, `migrate up --with-demo`, test fixtures).
   */
  async up(options: { to?: string; adopting?: boolean; demo?: boolean } = {}): Promise<string[]> {
    const applied = await this.upMigrations(options);
    if (options.demo) await this.installDemo();
    return applied;
  }

  /** The demo schema (migrations/<backend>/demo/reference_tables.sql): CREATE TABLE IF NOT EXISTS. */
  async installDemo(): Promise<void> {
    await this.driver.execute(demoSchemaPlan(this.backend, this.migrationsRoot));
  }

  private async upMigrations(options: { to?: string; adopting?: boolean }): Promise<string[]> {
    if (!options.adopting) await this.refuseUnadoptedBaseline();
    await this.checkAppliedUnchanged();
    if (options.to !== undefined && !this.files.some((f) => f.name === options.to)) {
      throw new Error(`no migration named ${options.to} in migrations/${this.backend}/`);
    }
    if (options.to !== undefined && (await this.appliedRows()).some((m) => m.name === options.to)) return [];
    await this.checkPending(options.to);
    await this.driver.bootstrap();
    const done = await (await this.umzug()).up(options.to === undefined ? undefined : { to: options.to });
    return done.map((m) => m.name);
  }

  /** The plans of the pending migrations (after `after`, up to `to`), for an adoption plan. */
  async pendingPlans(range: { after?: string; to?: string } = {}): Promise<Array<{ title: string; plan: PlannedStatement[] }>> {
    const applied = new Set((await this.driver.ledgerExists()) ? (await this.driver.applied()).map((m) => m.name) : []);
    return this.files
      .filter((f) => !applied.has(f.name))
      .filter((f) => (range.after === undefined || f.name > range.after) && (range.to === undefined || f.name <= range.to))
      .map((f) => ({ title: `migration ${f.name} (sha256 ${f.checksum})`, plan: planUp(this.backend, f, this.context) }));
  }

  async down(): Promise<string[]> {
    await this.checkAppliedUnchanged();
    await this.driver.bootstrap();
    const done = await (await this.umzug()).down();
    return done.map((m) => m.name);
  }

  /** Exactly the statements `up` would run now, as a reviewable script; refuses where `up` refuses. */
  async pendingSql(): Promise<string> {
    await this.refuseUnadoptedBaseline();
    // Read-only: the ledger is not created here (the script creates it).
    await this.checkAppliedUnchanged();
    // The same pins and requirements (character set) `up` checks first: read-only statements.
    await this.checkPending();
    const applied = new Set((await this.appliedRows()).map((m) => m.name));
    const parts = [renderPlan(this.backend, 'ledger (created if missing)', ledgerBootstrap(this.backend))];
    for (const file of this.files) {
      if (applied.has(file.name)) continue;
      parts.push(renderPlan(this.backend, `migration ${file.name} (sha256 ${file.checksum})`, planUp(this.backend, file, this.context)));
    }
    return `${parts.join('\n\n')}\n`;
  }

  /** Read-only: does not create the ledger tables. */
  async status(): Promise<MigrationStatus> {
    const applied = await this.appliedRows();
    const appliedByName = new Map(applied.map((m) => [m.name, m]));
    const migrations: MigrationStatusEntry[] = [];
    for (const file of this.files) {
      const row = appliedByName.get(file.name);
      if (!row) migrations.push({ name: file.name, state: 'pending' });
      else migrations.push({ name: file.name, state: row.checksum === file.checksum ? 'applied' : 'modified', appliedAt: row.appliedAt });
    }
    for (const row of applied) {
      if (!this.files.some((f) => f.name === row.name)) migrations.push({ name: row.name, state: 'missing_file', appliedAt: row.appliedAt });
    }
    const procedures = this.backend === 'oceanbase' ? await procedureStatus(this.driver, this.files, new Set(appliedByName.keys()), this.proceduresRoot) : [];
    const triggers = this.backend === 'oceanbase' ? triggerStatus(this.files, new Set(appliedByName.keys()), await this.driver.installedTriggers()) : [];
    const drift =
      migrations.some((m) => m.state === 'modified' || m.state === 'missing_file') ||
      triggers.some((t) => t.state === 'missing') ||
      procedures.some((p) => p.state !== 'ok' && p.state !== 'pending' && p.state !== 'on_demand' && p.state !== 'unreadable');
    const adoptions = (await this.driver.tableExists('pc_aps_adoptions'))
      ? (await this.driver.read('SELECT adoption, state, summary, converted_at, retired_at FROM pc_aps_adoptions ORDER BY adoption')).map((r) => ({
          adoption: String(r.adoption),
          state: String(r.state),
          summary: String(r.summary),
          convertedAt: String(r.converted_at),
          retiredAt: r.retired_at === null || r.retired_at === undefined ? null : String(r.retired_at),
        }))
      : [];
    const demo: string[] = [];
    for (const table of demoTables(this.backend, this.migrationsRoot)) if (await this.driver.tableExists(table)) demo.push(table);
    return {
      backend: this.backend,
      adoptions,
      migrations,
      procedures,
      triggers,
      drift,
      pending: migrations.filter((m) => m.state === 'pending').length,
      demoTables: demo,
    };
  }
}

function ledgerBootstrap(backend: MigrationBackend) {
  return ledgerStatements(backend).map((sql) => ({ sql }));
}

export function formatStatus(status: MigrationStatus): string {
  const lines = [`backend: ${status.backend === 'sqlite' ? 'sqlite' : 'oceanbase/mysql'}`, 'migrations:'];
  for (const m of status.migrations) lines.push(`  ${m.state.padEnd(12)} ${m.name}${m.appliedAt ? `  (applied ${m.appliedAt})` : ''}`);
  if (status.adoptions.length > 0) {
    lines.push('adoptions:');
    for (const a of status.adoptions) lines.push(`  ${a.state.padEnd(12)} ${a.adoption}  (${a.convertedAt}) ${a.summary}`);
  }
  if (status.procedures.length > 0) {
    lines.push('procedures:');
    for (const p of status.procedures) lines.push(`  ${p.state.padEnd(18)} ${p.name}  ${p.detail}`);
  }
  if (status.triggers.length > 0) {
    lines.push('triggers:');
    for (const t of status.triggers) lines.push(`  ${t.state.padEnd(18)} ${t.name}  ${t.detail}`);
  }
  if (status.demoTables.length > 0) {
    lines.push(`demo tables (apsup start / migrate up --with-demo; not part of a production schema): ${status.demoTables.join(', ')}`);
  }
  lines.push(
    status.drift
      ? 'DRIFT: the database does not match the migration files (see above)'
      : `schema: ${status.pending === 0 ? 'up to date' : `${status.pending} pending migration(s)`}`,
  );
  return lines.join('\n');
}
