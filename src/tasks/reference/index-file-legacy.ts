/**
 * Legacy version 0 of "index-file": tasks written before handler versions existed. Running one is
 * refused (the legacy code path no longer exists); its documented failure hook converges a file
 * left 'indexing' by the legacy pipeline (which did not record tasks or attempts) into 'error';
 * a file owned by a (newer) task is left alone. New submissions cannot use version 0.
 */
import { defineTaskHandler } from '../handler.ts';

export default defineTaskHandler({
  async run() {
    throw Object.assign(new Error('legacy index-file tasks (handler version 0) are not executed by this runtime; the legacy failure hook converged the file'), {
      code: 'legacy_not_executable',
    });
  },
  async failureHook(tx, task, { query }) {
    const payload = task.payload as { fileId?: string };
    if (!payload?.fileId) return;
    // Only rows no task owns (the legacy pipeline recorded none): a newer task's file is left alone.
    await query(
      tx,
      "UPDATE ref_files SET state = 'error', error = 'legacy indexing task failed' WHERE file_id = ? AND state IN ('parsing', 'indexing') AND task_id IS NULL",
      [payload.fileId],
    );
  },
});
