/**
 * Schema and procedure drift for the overview, from the same Migrator.status() as `apsup migrate
 * status`, read at most every `cacheMs` (it reads every procedure body on MySQL/OceanBase).
 * An account that may not read the migration records gets `checked: false` with the reason.
 */
import type { DatabaseTarget } from '../config/database-url.ts';
import { openMigrationDriver } from '../migrations/drivers.ts';
import { Migrator } from '../migrations/migrator.ts';

export interface SchemaState {
  checked: boolean;
  pending: number;
  drift: boolean;
  /** Up to 10 drifted or pending items (`migration 0031_x pending`, `procedure pc_x modified`). */
  problems: string[];
  reason?: string;
}

export async function readSchemaState(target: DatabaseTarget): Promise<SchemaState> {
  const driver = await openMigrationDriver(target);
  try {
    const status = await new Migrator(driver).status();
    const problems = [
      ...status.migrations.filter((m) => m.state !== 'applied').map((m) => `migration ${m.name} ${m.state}`),
      ...status.procedures.filter((p) => !['ok', 'pending', 'on_demand', 'unreadable'].includes(p.state)).map((p) => `procedure ${p.name} ${p.state}`),
      ...status.triggers.filter((t) => t.state === 'missing').map((t) => `trigger ${t.name} missing`),
    ];
    return { checked: true, pending: status.pending, drift: status.drift, problems: problems.slice(0, 10) };
  } catch (error) {
    return { checked: false, pending: 0, drift: false, problems: [], reason: `schema status not readable: ${(error as Error).message}` };
  } finally {
    await driver.close();
  }
}

export class SchemaWatch {
  private cached: { at: number; value: Promise<SchemaState> } | null = null;

  constructor(
    private readonly target: DatabaseTarget,
    private readonly cacheMs = 30_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  read(): Promise<SchemaState> {
    const t = this.now();
    if (!this.cached || t - this.cached.at > this.cacheMs) this.cached = { at: t, value: readSchemaState(this.target) };
    return this.cached.value;
  }
}
