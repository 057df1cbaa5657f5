/** Messages between the supervisor (parent) and a worker child process over the IPC channel. */
import type { ExecutionContext } from '../sdk/processor.ts';

export interface InvokeMessage {
  type: 'invoke';
  invocationId: number;
  scopeId: string;
  processorModule: string;
  processorExport?: string;
  context: ExecutionContext;
}

export type InvocationStatus =
  | 'ok' // processed and acknowledged
  | 'already_handled' // handled >= claimed at start: acknowledged without consuming new input
  | 'not_acknowledged' // returned without a persisted acknowledgement: protocol failure
  | 'failed'
  | 'conflict'
  | 'term_lost';

export interface ResultMessage {
  type: 'result';
  invocationId: number;
  status: InvocationStatus;
  error?: { name: string; message: string; code?: string };
  durationMs: number;
}

export type ParentMessage = InvokeMessage | { type: 'shutdown' };
export type ChildMessage = { type: 'ready'; pid: number } | ResultMessage;
