/**
 * Legacy version 0 of "generate-dataset": tasks that existed before handler versions (ADR: the
 * upgrade marks them version 0; only this explicit version uses the legacy failure hook).
 * Running one is refused (the legacy code path no longer exists); its failure hook fails a
 * dataset the legacy pipeline left 'generating' (or 'pending') without recording a task; a
 * dataset owned by a (newer) task is left alone. New submissions cannot use version 0.
 */
import { defineTaskHandler } from '../handler.ts';

export default defineTaskHandler({
  async run() {
    throw Object.assign(
      new Error('legacy generate-dataset tasks (handler version 0) are not executed by this runtime; the legacy failure hook failed the dataset'),
      { code: 'legacy_not_executable' },
    );
  },
  async failureHook(tx, task, { query }) {
    const payload = task.payload as { datasetId?: string };
    if (!payload?.datasetId) return;
    await query(tx, "UPDATE ref_datasets SET state = 'failed' WHERE dataset_id = ? AND state IN ('pending', 'generating') AND task_id IS NULL", [
      payload.datasetId,
    ]);
  },
});
