/**
 * The durable task types of the store's callers (runner, service, CLI, SDK): what is submitted,
 * claimed, listed and read, and the verdicts and outcomes the pc_task_* operations return.
 */
export type TaskState = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const TERMINAL_STATES: TaskState[] = ['succeeded', 'failed', 'cancelled'];

export interface SubmitInput {
  taskType: string;
  handlerVersion: number;
  payload: unknown;
  dedupeKey?: string | null;
  timeoutMs: number;
  resumedFromTaskId?: number | null;
}

/** A verdict the runner reaches for a running attempt (pc_task_record_verdict). */
export type StopVerdict = 'timeout' | 'interrupted_by_shutdown';

export type LostOutcome = 'failed' | 'requeued' | 'exhausted' | 'cancelled' | 'gave_up' | 'not_lost';

export interface SubmitResult {
  taskId: number;
  state: TaskState;
  outcome: 'created' | 'duplicate';
  dedupeKey: string | null;
}

export interface ClaimedTask {
  taskId: number;
  taskType: string;
  handlerVersion: number;
  payload: unknown;
  timeoutMs: number;
  attemptCount: number;
  attemptToken: string;
  attemptOwner: string;
  leaseExpiresAt: Date;
  resumedFromTaskId: number | null;
  dbNow: Date;
}

export interface TaskSummary {
  taskId: number;
  taskType: string;
  handlerVersion: number;
  state: TaskState;
  dedupeKey: string | null;
  attemptCount: number;
  progressCurrent: number | null;
  progressTotal: number | null;
  progressMessage: string | null;
  cancelRequested: boolean;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface TaskDetail extends TaskSummary {
  payload: unknown;
  timeoutMs: number;
  attemptToken: string | null;
  attemptOwner: string | null;
  heartbeatAt: Date | null;
  leaseExpiresAt: Date | null;
  result: unknown;
  errorCode: string | null;
  errorMessage: string | null;
  resumedFromTaskId: number | null;
  startedAt: Date | null;
  updatedAt: Date;
  dbNow: Date;
}

/** The most tasks one pc_task_claim_batch call takes. */
export const MAX_CLAIM_BATCH = 100;
/** Items of one pc_task_succeed_batch call (a runner's capacity bounds what it holds at once). */
export const MAX_SUCCESS_BATCH = 100;

export interface SuccessItem {
  taskId: number;
  attemptToken: string;
  resultJson: string | null;
}
/** Per item: written, or why pc_task_complete's rules refused it (nothing written). */
export type SuccessOutcome = 'succeeded' | 'task_not_found' | 'attempt_lost' | 'cancel_requested';
/** Claims with a success batch (pc_task_succeed_batch): as claimBatch takes them; maxCount 0 takes none. */
export interface ClaimRequest {
  workerId: string;
  leaseMs: number;
  taskTypes: readonly string[];
  maxCount: number;
}
