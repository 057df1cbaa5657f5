/**
 * Worker child process: rebuilds its own database connections from
 * POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL, loads processors by module path, and runs one scope
 * invocation at a time on the supervisor's request. Nothing of the parent's memory is used. The
 * processor gets a read handle (its own read-only connection, opened on first use) and the
 * fenced commit; the store itself stays here (RFC 6).
 */
import { exitWithParent } from '../child/parent-channel.ts';
import { ensureTsLoader, importUserModule, isInstanceOf, PRELOAD_TS_VARIABLE } from '../child/ts-loader.ts';
import { DATABASE_URL_VARIABLE, parseDatabaseUrl } from '../config/database-url.ts';
import { createLazyLogger } from '../logging.ts';
import { AuthorizationError, ConflictError, type Processor, type ProcessorContext } from '../sdk/processor.ts';
import { StoreError, TermLostError } from '../store/errors.ts';
import { openStoreLazily } from '../store/open-lazy.ts';
import type { BaseStore } from '../store/base-store.ts';
import { readerTargetOf } from '../store/session-accounts.ts';
import { reportTransactions, transactionBudgetFromEnv } from '../store/transaction-observer.ts';
import { lazyReadHandle, openReadHandle, type ReadHandle } from '../store/read-handle.ts';
import { withScopedTx, type Tx } from '../store/scoped-tx.ts';
import type { AckResult, Store } from '../store/types.ts';
import {
  WORKER_GRACE_VARIABLE,
  type AcknowledgedGenerations,
  type ChildMessage,
  type InvocationReport,
  type InvocationStatus,
  type InvokeMessage,
  type ParentMessage,
  type ResultMessage,
} from './protocol.ts';
import { faultPoint } from '../devtools/fault.ts';
import { tracedInvocation } from '../observability/tracing.ts';

const logger = createLazyLogger({ name: 'apsup-worker' });
let store: Store | null = null;
let reader: ReadHandle | null = null;
const processors = new Map<string, Processor>();
let current: AbortController | null = null;
/** Set by SIGTERM: the process leaves as soon as the running invocation has reported. */
let terminating = false;
/** The grace period of a graceful termination, given by the supervisor (TERMINATE_GRACE_SECONDS). */
const graceMs = Number(process.env[WORKER_GRACE_VARIABLE]) > 0 ? Number(process.env[WORKER_GRACE_VARIABLE]) : 5000;

function send(message: ChildMessage, then?: () => void): void {
  if (!process.send) {
    then?.();
    return;
  }
  process.send(message, undefined, {}, () => then?.());
}

function leave(): void {
  process.exit(143);
}

async function loadProcessor(modulePath: string, exportName?: string): Promise<Processor> {
  const key = `${modulePath}#${exportName ?? ''}`;
  let processor = processors.get(key);
  if (!processor) {
    const mod = await importUserModule(modulePath);
    const candidate = (exportName ? mod[exportName] : (mod.default ?? mod.processor)) as Processor | undefined;
    if (!candidate || typeof candidate.processScope !== 'function') {
      throw new Error(`processor module does not export ${exportName ?? 'default'} with processScope()`);
    }
    processor = candidate;
    processors.set(key, processor);
  }
  return processor;
}

async function invoke(message: InvokeMessage): Promise<ResultMessage> {
  const started = performance.now();
  const { context, scopeId } = message;
  let acknowledgement: AcknowledgedGenerations | undefined;
  const result = (report: InvocationReport): ResultMessage => ({
    type: 'result',
    invocationId: message.invocationId,
    durationMs: performance.now() - started,
    ...report,
  });
  const done = (status: Exclude<InvocationStatus, 'ok'>, error?: unknown): ResultMessage =>
    result({
      status,
      ...(error
        ? { error: { name: (error as Error).name ?? 'Error', message: (error as Error).message ?? String(error), code: (error as StoreError).code } }
        : {}),
    });
  const committed = (ack: AckResult) => {
    acknowledgement = {
      requestedGeneration: ack.requestedGeneration,
      handledGeneration: ack.handledGeneration,
      dirtyGeneration: ack.dirtyGeneration,
      cleanGeneration: ack.cleanGeneration,
    };
  };
  const db = store!;
  const term = { supervisorKey: context.supervisorKey, holderId: context.holderId, supervisorGeneration: context.supervisorGeneration };
  let acknowledged = false;
  let deferred: { confirmClean: boolean } | null = null;
  current = new AbortController();
  try {
    // The supervisor's claim read is the start snapshot (one read per invocation, not two).
    const snapshot = message.snapshot ?? (await db.readIntent(context.bindingName, scopeId));
    if (!snapshot) throw new Error('intent row not found for the scheduling key');
    if (snapshot.handledGeneration >= context.claimedRequestGeneration) {
      // Already acknowledged (e.g. commit succeeded but the notification was lost): never consume new input for it.
      return done('already_handled');
    }
    const processor = await loadProcessor(message.processorModule, message.processorExport);
    const ackOptions = (confirmClean?: boolean) => ({
      bindingName: context.bindingName,
      scopeId,
      claimedRequestGeneration: context.claimedRequestGeneration,
      cleanThroughDirtyGeneration: confirmClean ? snapshot.dirtyGeneration : null,
    });
    const ctx: ProcessorContext = {
      ...context,
      backend: db.backend,
      snapshot,
      read: reader!,
      readBindingState: () => db.readBindingState(context.bindingName),
      // Made on first use: most processors never log, and the first child loads pino.
      get logger() {
        const child = logger.child({ binding: context.bindingName, family: context.artifactFamily, workerId: context.workerId });
        Object.defineProperty(this, 'logger', { value: child });
        return child;
      },
      // The host's trusted background principal (TRUSTED_PRINCIPAL_ID; RFC 6, A13/A14), as data.
      principal: Object.freeze({ ...message.principal }),
      signal: current.signal,
      async commit(fn, options = {}) {
        let ack: AckResult | null = null;
        // Opened with the term asserted (pc_aps_begin_fenced: one call on MySQL/OceanBase).
        return db
          .fencedTransaction(term, async (tx) => {
            const result = await withScopedTx(tx, db.backend, fn);
            if (options.acknowledge) {
              const clean = typeof options.confirmClean === 'function' ? options.confirmClean(result) : options.confirmClean;
              // Bound to this invocation by the host's token (a restricted account may call only that one).
              ack = message.invocationToken
                ? await db.ackInvocationWithToken(term, ackOptions(clean), message.invocationToken, tx)
                : await db.ackInvocation(term, ackOptions(clean), tx);
            }
            return result;
          })
          .then((result) => {
            if (ack) {
              acknowledged = true;
              committed(ack);
            }
            return result;
          });
      },
      async acknowledge(options = {}) {
        // The supervisor commits it once processScope has returned normally (batched, fenced by
        // this term); a processor that throws afterwards leaves the request owed.
        deferred = { confirmClean: deferred?.confirmClean === true || options.confirmClean === true };
      },
      query: (tx: Tx, sql: string, params?: unknown[]) => tx.query(sql, params),
    };
    await processor.processScope(scopeId, ctx);
    faultPoint('after_business_commit');
    if (acknowledged && acknowledgement) return result({ status: 'ok', acknowledgement: { kind: 'committed', generations: acknowledgement } });
    if (deferred) return result({ status: 'ok', acknowledgement: { kind: 'deferred', confirmClean: (deferred as { confirmClean: boolean }).confirmClean } });
    return done('not_acknowledged');
  } catch (error) {
    // isInstanceOf: a processor's SDK classes may be another copy than this (precompiled) child's.
    if (isInstanceOf(error, TermLostError)) return done('term_lost', error);
    if (isInstanceOf(error, ConflictError)) return done('conflict', error);
    if (isInstanceOf(error, AuthorizationError)) return done('failed', error);
    return done('failed', error);
  } finally {
    current = null;
  }
}

async function main(): Promise<void> {
  const target = parseDatabaseUrl(process.env[DATABASE_URL_VARIABLE]);
  store = await openStoreLazily(target);
  // The host ends a transaction of ours past its budget; we report them (issue 40 item 2).
  (store as BaseStore).onTransaction = reportTransactions((m) => send(m), target, transactionBudgetFromEnv());
  if (process.env[PRELOAD_TS_VARIABLE] === '1') await ensureTsLoader();
  // The reader account (SELECT on business tables only) when the host has one (session-accounts.ts).
  const readerTarget = readerTargetOf(process.env, target);
  reader = lazyReadHandle(target.backend, () => openReadHandle(readerTarget));
  let queue = Promise.resolve();
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'shutdown') {
      queue = queue.then(async () => {
        await reader?.close();
        await store?.close();
        process.exit(0);
      });
      return;
    }
    if (message.type === 'invoke') {
      queue = queue.then(async () => {
        const result = await tracedInvocation(message, () => invoke(message));
        // Once terminating, leave right after the reply (the supervisor settles on the exit).
        await new Promise<void>((resolve) => send(result, resolve));
        if (terminating) leave();
      });
    }
  });
  process.on('SIGTERM', () => {
    // Graceful termination: tell the running processor, leave once it has reported, and at the
    // latest when the grace period ends (the supervisor kills the process then).
    if (terminating) return;
    terminating = true;
    if (!current) leave();
    current?.abort();
    setTimeout(leave, graceMs).unref();
  });
  send({ type: 'ready', pid: process.pid });
}

// A terminal's Ctrl-C reaches the whole process group: the host decides (SIGTERM, then SIGKILL).
process.on('SIGINT', () => undefined);
exitWithParent();
main().catch((error: unknown) => {
  logger.error({ err: (error as Error).message }, 'worker failed to start');
  process.exit(1);
});
