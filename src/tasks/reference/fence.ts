/**
 * Domain-row fencing of the reference handlers. ctx.query reports no affected-row count (and
 * affected rows are not trusted for decisions), so after an UPDATE fenced by (task_id,
 * attempt_token) the handler reads the row back in the same transaction: a row no longer owned by
 * this attempt (another task took it over) raises the attempt-lost error, which rolls the
 * transaction back and ends the attempt instead of letting it "succeed" without its writes.
 */
import { AttemptLostError } from '../../store/errors.ts';
import type { Tx } from '../../store/scoped-tx.ts';
import type { TaskContext } from '../handler.ts';

export async function assertOwnedRow(
  ctx: TaskContext,
  tx: Tx,
  table: 'ref_files' | 'ref_datasets',
  keyColumn: 'file_id' | 'dataset_id',
  key: string,
): Promise<void> {
  const rows = await ctx.query(tx, `SELECT 1 AS owned FROM ${table} WHERE ${keyColumn} = ? AND task_id = ? AND attempt_token = ?`, [
    key,
    ctx.taskId,
    ctx.attemptToken,
  ]);
  if (rows.length === 0) throw new AttemptLostError(`${table} ${key} (owned by another task or attempt)`);
}

/** Whether the task that owns a domain row is still active (pending or running). */
export async function ownerActive(ctx: TaskContext, tx: Tx, ownerTaskId: unknown): Promise<boolean> {
  if (ownerTaskId === null || ownerTaskId === undefined || Number(ownerTaskId) === ctx.taskId) return false;
  return ctx.taskActive(tx, Number(ownerTaskId));
}
