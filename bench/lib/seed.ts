/**
 * Set-based seeding of dirty intents for benchmarks (not measured): N keys of one binding with
 * dirty_generation = 1, inserted in chunks through a digits cross join that both backends run.
 */
import type { BackendFixtureLike } from './fixture.ts';

export async function seedDirtyScopes(fx: BackendFixtureLike, bindingName: string, count: number): Promise<void> {
  const chunk = 100_000;
  for (let offset = 0; offset < count; offset += chunk) {
    const n = Math.min(chunk, count - offset);
    const digits =
      fx.backend === 'sqlite'
        ? '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)'
        : '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';
    const concat = fx.backend === 'sqlite' ? "'scope-' || (n + ?)" : "CONCAT('scope-', n + ?)";
    const sql = `INSERT INTO pc_artifact_processing_intents (binding_name, scope_id, dirty_generation)
      SELECT ?, ${concat}, 1 FROM (
        SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n
          FROM ${digits} a CROSS JOIN ${digits} b CROSS JOIN ${digits} c CROSS JOIN ${digits} e CROSS JOIN ${digits} f
      ) numbers WHERE n < ? ORDER BY n`;
    await fx.exec(sql, [bindingName, offset, n]);
  }
}
