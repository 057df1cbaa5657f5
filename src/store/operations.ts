/**
 * The operation catalogue: one name per operation, the same on both backends (what each field
 * means: operation-spec.ts). test/catalogue.test.ts checks the SQL files against it.
 */
import { SUPERVISOR_OPERATIONS } from './supervisor-operations.ts';
import { TASK_OPERATIONS } from './task-operations.ts';
import { TERM, type OperationSpec } from './operation-spec.ts';

export type { OperationSpec, TransactionMode } from './operation-spec.ts';

export const OPERATIONS = { ...SUPERVISOR_OPERATIONS, ...TASK_OPERATIONS } as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof OPERATIONS;
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

/**
 * Procedures that only other procedures call (no Store method). Installed and pinned by
 * migrations like the operations. MySQL-only (on SQLite the database write lock of BEGIN
 * IMMEDIATE is the fence; their files are in procedures/oceanbase/internal/), unless
 * `sqliteInclude`: then the SQLite scripts include its twin, beside the operations.
 */
export const INTERNAL_PROCEDURES = {
  pc_aps_intake_batch: {
    params: ['counter', 'binding_name', 'scope_ids', 'scope_ends'],
    transaction: 'caller',
    summary: 'the one body of pc_aps_mark_dirty_batch and pc_aps_accept_request_batch: set-based intake of up to 1000 items, the counter the only difference',
    sqliteInclude: true,
  },
  pc_aps_task_complete_attempt: {
    params: ['task_id', 'attempt_token', 'result'],
    transaction: 'caller',
    summary: 'the one text of the success rules (fence, recorded cancel, timeout verdict, the update), called by pc_task_complete and pc_task_succeed_batch',
  },
  pc_aps_task_claim_rows: {
    params: ['worker_id', 'lease_ms', 'task_types', 'max_count'],
    transaction: 'caller',
    summary: 'the one body of the claims of pc_task_claim_batch and pc_task_succeed_batch: up to max_count oldest pending tasks, never past the database cap',
    sqliteInclude: true,
  },
  pc_aps_write_fences: {
    params: [...TERM],
    transaction: 'caller',
    summary: 'the one writer of the 32 fence rows of a key (holder, generation), called by every term change',
  },
} as const satisfies Record<string, OperationSpec>;

export type InternalProcedureName = keyof typeof INTERNAL_PROCEDURES;
export const INTERNAL_PROCEDURE_NAMES = Object.keys(INTERNAL_PROCEDURES) as InternalProcedureName[];
