/**
 * Reference handler "index-file" (version 1): indexes a knowledge file in chunks. The file row's
 * intermediate state ('indexing') is bound to the task and attempt; every write is fenced by the
 * attempt (a fenced update that no longer finds the file owned by this attempt raises
 * attempt_lost; a file being indexed by another active task is refused with file_busy); the
 * failure hook turns a file still owned by the failed task into 'error'.
 * Payload: { fileId, chunks?, chunkDelayMs?, failAtChunk? }  (failAtChunk: test hook)
 */
import { TaskCancelledError, defineTaskHandler, type TaskContext } from '../handler.ts';
import type { Tx } from '../../store/scoped-tx.ts';
import { assertOwnedRow, ownerActive } from './fence.ts';

interface Payload {
  fileId: string;
  chunks?: number;
  chunkDelayMs?: number;
  failAtChunk?: number;
}

async function ensureFile(ctx: TaskContext, tx: Tx, fileId: string): Promise<void> {
  const rows = await ctx.query(tx, `SELECT file_id, task_id FROM ref_files WHERE file_id = ?${ctx.backend === 'sqlite' ? '' : ' FOR UPDATE'}`, [fileId]);
  if (rows.length === 0) await ctx.query(tx, "INSERT INTO ref_files (file_id, state) VALUES (?, 'uploaded')", [fileId]);
  else if (await ownerActive(ctx, tx, rows[0].task_id)) {
    throw Object.assign(new Error(`file ${fileId} is being indexed by task ${String(rows[0].task_id)}`), { code: 'file_busy' });
  }
}

export default defineTaskHandler({
  async run(raw, ctx) {
    const payload = raw as Payload;
    const total = payload.chunks ?? 5;
    await ctx.commit(async (tx) => {
      await ensureFile(ctx, tx, payload.fileId);
      await ctx.query(tx, "UPDATE ref_files SET state = 'indexing', chunks = 0, task_id = ?, attempt_token = ?, error = NULL WHERE file_id = ?", [
        ctx.taskId,
        ctx.attemptToken,
        payload.fileId,
      ]);
    });
    try {
      for (let chunk = 1; chunk <= total; chunk += 1) {
        if (payload.failAtChunk === chunk) throw new Error(`chunk ${chunk} of ${payload.fileId} could not be parsed`);
        if (payload.chunkDelayMs) await new Promise((r) => setTimeout(r, payload.chunkDelayMs));
        await ctx.commit(async (tx) => {
          await ctx.query(tx, 'UPDATE ref_files SET chunks = ? WHERE file_id = ? AND task_id = ? AND attempt_token = ?', [
            chunk,
            payload.fileId,
            ctx.taskId,
            ctx.attemptToken,
          ]);
          await assertOwnedRow(ctx, tx, 'ref_files', 'file_id', payload.fileId);
        });
        await ctx.progress(chunk, total, chunk === total ? 'all chunks indexed' : null);
      }
    } catch (error) {
      if (error instanceof TaskCancelledError) {
        // Cleanup point: the partial index is dropped and the file returns to 'uploaded'.
        await ctx.commit(async (tx) => {
          await ctx.query(tx, "UPDATE ref_files SET state = 'uploaded', chunks = 0, task_id = NULL, attempt_token = NULL WHERE file_id = ? AND task_id = ?", [
            payload.fileId,
            ctx.taskId,
          ]);
        });
      }
      throw error;
    }
    // 'indexed' commits with the task's success (one transaction): never a file indexed by a failed task.
    ctx.onComplete(async (tx) => {
      await ctx.query(tx, "UPDATE ref_files SET state = 'indexed' WHERE file_id = ? AND task_id = ? AND attempt_token = ?", [
        payload.fileId,
        ctx.taskId,
        ctx.attemptToken,
      ]);
      await assertOwnedRow(ctx, tx, 'ref_files', 'file_id', payload.fileId);
    });
    return { fileId: payload.fileId, chunks: total };
  },
  async failureHook(tx, task, { query }) {
    const payload = task.payload as Payload;
    // Only rows that still belong to this task converge; a newer task's file is left alone.
    await query(tx, "UPDATE ref_files SET state = 'error', error = 'indexing task failed' WHERE file_id = ? AND task_id = ? AND state = 'indexing'", [
      payload.fileId,
      task.taskId,
    ]);
  },
});
