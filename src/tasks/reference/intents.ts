/**
 * Intent hooks of the reference task types (ADR: domain objects are created or linked in the
 * transaction of the task intent). Submitting a dataset generation writes its dataset row
 * 'pending' and owned by the new task; an index-file submission links its file row to the task.
 * A row owned by another active task is left to it (the handler then refuses: dataset_busy,
 * file_busy). The row is locked first (MySQL FOR UPDATE; SQLite: the writer lock).
 */
import type { TxHandle } from '../../store/types.ts';
import type { IntentHelpers, TaskIntent } from '../registry.ts';

/** An explicit resume of a dataset that a later task already completed (ADR: resume continues a failed dataset only). */
export class ResumeSupersededError extends Error {
  readonly code = 'resume_superseded';
  constructor(message: string) {
    super(message);
    this.name = 'ResumeSupersededError';
  }
}

async function lockedRow(tx: TxHandle, h: IntentHelpers, table: 'ref_datasets' | 'ref_files', key: 'dataset_id' | 'file_id', id: string, columns: string) {
  const rows = await h.query(tx, `SELECT ${columns} FROM ${table} WHERE ${key} = ?${h.backend === 'sqlite' ? '' : ' FOR UPDATE'}`, [id]);
  return rows[0] ?? null;
}

async function ownedByOtherActive(tx: TxHandle, h: IntentHelpers, owner: unknown, taskId: number): Promise<boolean> {
  if (owner === null || owner === undefined || Number(owner) === taskId) return false;
  return (await h.query(tx, "SELECT 1 AS active FROM pc_durable_tasks WHERE task_id = ? AND state IN ('pending', 'running')", [Number(owner)])).length > 0;
}

export async function datasetIntent(tx: TxHandle, task: TaskIntent, h: IntentHelpers): Promise<void> {
  const p = task.payload as { datasetId: string; items: number };
  const row = await lockedRow(tx, h, 'ref_datasets', 'dataset_id', p.datasetId, 'state, task_id');
  if (!row) {
    await h.query(tx, "INSERT INTO ref_datasets (dataset_id, target_items, generated, state, task_id, attempt_token) VALUES (?, ?, 0, 'pending', ?, NULL)", [
      p.datasetId,
      p.items,
      task.taskId,
    ]);
    return;
  }
  if (await ownedByOtherActive(tx, h, row.task_id, task.taskId)) return;
  if (task.resumedFromTaskId !== null && String(row.state) === 'completed') {
    throw new ResumeSupersededError(
      `dataset ${p.datasetId} was already completed by task ${String(row.task_id)}; task ${task.resumedFromTaskId} is not resumed`,
    );
  }
  // Only an explicit resume keeps the checkpoint; a plain new task starts over.
  await h.query(
    tx,
    `UPDATE ref_datasets SET state = 'pending', target_items = ?, task_id = ?, attempt_token = NULL${task.resumedFromTaskId === null ? ', generated = 0' : ''} WHERE dataset_id = ?`,
    [p.items, task.taskId, p.datasetId],
  );
}

export async function fileIntent(tx: TxHandle, task: TaskIntent, h: IntentHelpers): Promise<void> {
  const p = task.payload as { fileId: string };
  const row = await lockedRow(tx, h, 'ref_files', 'file_id', p.fileId, 'state, task_id');
  if (!row) {
    await h.query(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES (?, 'uploaded', ?)", [p.fileId, task.taskId]);
    return;
  }
  if (await ownedByOtherActive(tx, h, row.task_id, task.taskId)) return;
  // Linked, not started: the state stays as it is until the handler takes the file ('indexing').
  await h.query(tx, 'UPDATE ref_files SET task_id = ?, attempt_token = NULL WHERE file_id = ?', [task.taskId, p.fileId]);
}
