/** Messages between the supervisor (parent) and a worker child process over the IPC channel. */
import type { BackgroundPrincipal, ExecutionContext } from '../sdk/processor.ts';
import type { IntentSnapshot } from '../store/types.ts';
import type { TraceCarrier } from '../observability/tracing.ts';
import type { TransactionMessage } from '../store/transaction-observer.ts';

/** The generations a committed acknowledgement left on the intent row (the ack's own result). */
export interface AcknowledgedGenerations {
  requestedGeneration: number;
  handledGeneration: number;
  dirtyGeneration: number;
  cleanGeneration: number;
}

export interface InvokeMessage {
  type: 'invoke';
  invocationId: number;
  scopeId: string;
  processorModule: string;
  processorExport?: string;
  context: ExecutionContext;
  /** The trusted background principal of this family (TRUSTED_PRINCIPAL_ID, resolved by the host). */
  principal: BackgroundPrincipal;
  /**
   * The intent as the supervisor read it when it claimed the requested generation (the start
   * snapshot: its dirty generation is the one a clean confirmation may confirm). The worker reads
   * it itself when absent.
   */
  snapshot?: IntentSnapshot;
  /** The supervisor's dispatch span (src/observability/tracing.ts); absent while nothing is traced. */
  trace?: TraceCarrier;
  /** The host's token of this invocation, presented by the acknowledgement (pc_aps_ack_invocation_token). */
  invocationToken?: string;
}

export type InvocationStatus =
  | 'ok' // processed and acknowledged
  | 'already_handled' // handled >= claimed at start: acknowledged without consuming new input
  | 'not_acknowledged' // returned without a persisted acknowledgement: protocol failure
  | 'failed'
  | 'conflict'
  | 'term_lost';

export interface ErrorInfo {
  name: string;
  message: string;
  code?: string;
}

/** How the acknowledgement of an 'ok' invocation stands (RFC 5: done only once it committed). */
export type Acknowledgement =
  /** The worker's own transaction committed it: the row it left. */
  | { kind: 'committed'; generations: AcknowledgedGenerations }
  /**
   * The processor returned normally after `ctx.acknowledge()`: the supervisor is asked to commit
   * it (fenced by the invocation's term, batched: src/runtime/ack-batcher.ts). Nothing is done
   * until that transaction commits.
   */
  | { kind: 'deferred'; confirmClean: boolean };

/** What a worker reports of one invocation: an 'ok' always carries its acknowledgement. */
export type InvocationReport =
  | { status: 'ok'; acknowledgement: Acknowledgement; error?: undefined }
  | { status: Exclude<InvocationStatus, 'ok'>; error?: ErrorInfo };

export type ResultMessage = { type: 'result'; invocationId: number; durationMs: number } & InvocationReport;

/** Environment variable that gives a worker child the grace period of a graceful termination. */
export const WORKER_GRACE_VARIABLE = 'APSUP_WORKER_TERMINATE_GRACE_MS';

export type ParentMessage = InvokeMessage | { type: 'shutdown' };
export type ChildMessage = { type: 'ready'; pid: number } | ResultMessage | TransactionMessage;
