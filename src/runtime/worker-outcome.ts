/**
 * What one invocation came to, as the worker pool saw it (worker-pool.ts): the worker's report,
 * or its end by timeout or crash. A result that arrived while the process was being terminated
 * counts only once the exit is confirmed, and a deferred acknowledgement in it is not committed.
 */
import type { ErrorInfo, InvocationReport, ResultMessage } from '../worker/protocol.ts';

export type WorkerOutcome = { durationMs: number; pid: number } & (
  | InvocationReport
  | { status: 'timeout' | 'crashed'; error: ErrorInfo; exitCode: number | null; signal: string | null }
);

/** The report of a result message (its routing fields dropped). */
export function reportOf(m: ResultMessage): InvocationReport {
  const { type: _type, invocationId: _id, durationMs: _duration, ...report } = m;
  return report;
}

export interface ExitFacts {
  durationMs: number;
  pid: number;
  exitCode: number | null;
  signal: string | null;
  /** The invocation's timeout fired (it started the termination). */
  timedOut: boolean;
  timeoutMs: number;
  /** The process had not reported ready when it exited. */
  startingUp: boolean;
  /** A result received during the termination, if any. */
  late: ResultMessage | null;
}

/** The outcome of an invocation whose process exited before its result settled it. */
export function exitOutcome(f: ExitFacts): WorkerOutcome {
  const { durationMs, pid, exitCode, signal, late } = f;
  if (f.timedOut) {
    const phase = f.startingUp ? ' (the worker process was still starting up)' : '';
    const reply = late ? `; the processor replied ${late.status} during the termination` : '';
    return {
      status: 'timeout',
      durationMs,
      pid,
      exitCode,
      signal,
      error: { name: 'TimeoutError', message: `invocation exceeded ${f.timeoutMs} ms${phase}${reply}` },
    };
  }
  if (late) {
    // Terminated for another reason (lost term, shutdown): the reply counts, after the exit.
    // An acknowledgement left to the supervisor is not committed for a terminated worker.
    const report = reportOf(late);
    if (report.status === 'ok' && report.acknowledgement.kind === 'deferred') {
      return {
        status: 'not_acknowledged',
        durationMs,
        pid,
        error: { name: 'Error', message: 'worker terminated before the supervisor committed its acknowledgement' },
      };
    }
    return { ...report, durationMs, pid };
  }
  return {
    status: 'crashed',
    durationMs,
    pid,
    exitCode,
    signal,
    error: { name: 'WorkerCrash', message: `worker exited (code ${exitCode}, signal ${signal})` },
  };
}
