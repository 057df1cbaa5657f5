/**
 * Dispatch, invocation and settlement of one family's keys (RFC 5, 6, 7): a ready key gets a
 * worker while the family has budget; its outcome is booked only against the persisted
 * acknowledgement (never done without it, never failed when it did commit); a failure or a
 * conflict puts the key into retry-wait with its backoff; at most one successor follows.
 */
import { SPANS, familyAttributes, traced } from '../observability/tracing.ts';
import type { Logger } from '../logging.ts';
import { TermLostError } from '../store/errors.ts';
import type { Store, Term } from '../store/types.ts';
import { ackBatcherFor } from './ack-batcher.ts';
import type { BackoffIndex } from './backoff.ts';
import type { Clock } from './clock.ts';
import type { FamilyHealth } from './family-health.ts';
import { intentReaderFor } from './intent-reader.ts';
import type { Invocation, KeyStateTable, ReadySource } from './key-states.ts';
import type { PartitionHooks } from './partition-types.ts';
import type { WorkerOutcome } from './worker-outcome.ts';
import type { WorkerPool } from './worker-pool.ts';

export interface InvokerContext {
  family: string;
  bindingName: string;
  budget: number;
  store: Store;
  pool: Pick<WorkerPool, 'run'>;
  table: KeyStateTable;
  backoff: BackoffIndex;
  health: FamilyHealth;
  hooks: Pick<PartitionHooks, 'wake' | 'termLost' | 'currentTerm' | 'dispatchTerm'>;
  /** Queues a key (the partition's enqueue: it also keeps the scan's turn, RFC 2). */
  enqueue(scopeId: string, source: ReadySource): boolean;
  /** A key whose successor found no place in the ready queue: owed discovery finds it. */
  notifyRequest(pendingSequence?: number): void;
  clock: Clock;
  logger: Logger;
}

/** One worker invocation's outcome, for observers (the console's recent invocations). */
export interface InvocationRecord {
  family: string;
  scopeId: string;
  /** Wall time of the outcome (the host clock). */
  at: number;
  status: string;
  durationMs: number;
  requestGeneration: number;
  workerId: string;
  error: string | null;
}

export class Invoker {
  invocations = 0;
  timeouts = 0;
  readonly failures: Record<string, number> = {};
  /** Set at shutdown: outcomes of terminated workers are not failures. */
  closing = false;
  /** Optional observer of every worker invocation's outcome (metrics); never affects dispatch. */
  onInvocation: ((family: string, outcome: string, durationMs: number) => void) | null = null;
  /** Further observers of each outcome, with its key; never affect dispatch. */
  readonly observers = new Set<(record: InvocationRecord) => void>();
  private workerSeq = 0;

  constructor(private readonly c: InvokerContext) {}

  hasBudget(): boolean {
    return this.c.table.count('running') < this.c.budget;
  }

  /**
   * Starts a worker for each ready key while the family has budget and a term that may dispatch.
   * Called by the examination and, so a freed slot never waits for an examination in flight (an
   * admission page, a discovery read), by an invocation as soon as its worker is free.
   */
  dispatch(): void {
    const { hooks } = this.c;
    while (!this.closing && this.hasBudget() && this.c.table.peek() !== undefined) {
      const term = hooks.dispatchTerm ? hooks.dispatchTerm() : hooks.currentTerm();
      if (!term) return;
      const started = this.c.table.startNext(() => ({ workerId: `${this.c.family}-${++this.workerSeq}`, term, generation: 0 }))!;
      void traced(SPANS.dispatch, familyAttributes(this.c.family, this.c.bindingName), () => this.invoke(started.key, started.invocation));
    }
  }

  private async invoke(scopeId: string, invocation: Invocation): Promise<void> {
    const { table, store, pool, hooks, backoff, family, bindingName } = this.c;
    const { term, workerId } = invocation;
    let successor = false;
    let pendingSequence: number | undefined;
    try {
      // Read at dispatch (queued requests merge into it), together with the other keys of this turn.
      const intent = await intentReaderFor(store).read(bindingName, scopeId);
      pendingSequence = intent?.pendingSequence;
      if (!intent || intent.requestedGeneration <= intent.handledGeneration) {
        backoff.succeed(scopeId);
        return; // nothing owed any more (merged into an earlier invocation)
      }
      const generation = intent.requestedGeneration;
      invocation.generation = generation;
      this.invocations += 1;
      let outcome: WorkerOutcome = await pool.run(
        scopeId,
        {
          bindingName,
          artifactFamily: family,
          claimedRequestGeneration: generation,
          supervisorKey: term.supervisorKey,
          holderId: term.holderId,
          supervisorGeneration: term.supervisorGeneration,
          workerId,
        },
        intent,
      );
      try {
        this.onInvocation?.(family, outcome.status, outcome.durationMs);
        if (this.observers.size > 0) {
          const error = 'error' in outcome && outcome.error ? String(outcome.error.message) : null;
          const record = {
            family,
            scopeId,
            at: this.c.clock.now(),
            status: outcome.status,
            durationMs: outcome.durationMs,
            requestGeneration: generation,
            workerId,
            error,
          };
          for (const observe of this.observers) observe(record);
        }
      } catch {
        /* an observer never disturbs dispatch */
      }
      if (outcome.status === 'ok' && outcome.acknowledgement.kind === 'deferred') {
        // The worker is done and back in the pool: its budget slot is free while the supervisor
        // commits the acknowledgement (batched); the key stays busy (settling) until then.
        table.settle(scopeId);
        this.dispatch();
        hooks.wake();
        outcome = await this.commitDeferredAck(term, scopeId, generation, outcome.acknowledgement.confirmClean ? intent.dirtyGeneration : null, outcome);
      }
      successor = await this.settle(scopeId, invocation, outcome);
    } catch (error) {
      if (error instanceof TermLostError) hooks.termLost(term);
      else if (!this.closing) this.recordFailure(scopeId, invocation, 'dispatch_error', error as Error);
    } finally {
      table.finish(scopeId);
      // At most one successor; it merges every request accepted meanwhile (the key is no longer
      // running, so it can take its place in the ready queue at once). A request that discovery
      // found while the key was busy is owed too, even when the acknowledgement's row (committed
      // before that request) shows nothing owed: the successor's read at dispatch decides.
      successor ||= (invocation.owedSeen ?? 0) > invocation.generation;
      if (successor && !this.closing && !this.c.enqueue(scopeId, 'successor')) this.c.notifyRequest(pendingSequence);
      this.dispatch();
      hooks.wake();
    }
  }

  /**
   * A worker that returned after `ctx.acknowledge()` leaves the commit to the supervisor: it is
   * committed here (batched with other workers', fenced by the invocation's term) and the outcome
   * then carries the committed row like an acknowledgement the worker committed itself.
   */
  private async commitDeferredAck(
    term: Term,
    scopeId: string,
    generation: number,
    cleanThroughDirtyGeneration: number | null,
    outcome: WorkerOutcome,
  ): Promise<WorkerOutcome> {
    const { durationMs, pid } = outcome;
    try {
      const ack = await ackBatcherFor(this.c.store).acknowledge(term, {
        bindingName: this.c.bindingName,
        scopeId,
        claimedRequestGeneration: generation,
        cleanThroughDirtyGeneration,
      });
      return { status: 'ok', durationMs, pid, acknowledgement: { kind: 'committed', generations: ack } };
    } catch (error) {
      if (error instanceof TermLostError)
        return { status: 'term_lost', durationMs, pid, error: { name: error.name, message: error.message, code: 'term_lost' } };
      return { status: 'failed', durationMs, pid, error: { name: (error as Error).name, message: `acknowledgement failed: ${(error as Error).message}` } };
    }
  }

  /** Books the outcome of one invocation; returns whether a successor invocation is owed. */
  private async settle(scopeId: string, invocation: Invocation, outcome: WorkerOutcome): Promise<boolean> {
    const { hooks, logger, backoff, table, clock } = this.c;
    const { term, generation, workerId, source } = invocation;
    const current = hooks.currentTerm();
    const sameTerm = current && current.supervisorGeneration === term.supervisorGeneration && current.holderId === term.holderId;
    if (outcome.status === 'term_lost') {
      hooks.termLost(term);
      return false;
    }
    if (!sameTerm) return false; // the new term recovers this key from the database
    if (outcome.status === 'timeout') this.timeouts += 1;
    const where = { binding: this.c.bindingName, family: this.c.family, scope: scopeId };
    if (this.closing) {
      // Shutdown terminated the worker: its request stays owed for the next term (RFC 9).
      logger.info({ ...where, requestGeneration: generation, workerId, outcome: outcome.status }, 'invocation ended by shutdown');
      return false;
    }
    // Never report done without the persisted acknowledgement (RFC 5), and never report a
    // failure for an invocation whose acknowledgement did commit (the worker crashed, timed out
    // or threw only after its commit: the notification was lost, the work is done). An 'ok'
    // carries the row its committed acknowledgement left; every other outcome is checked
    // against the database.
    const after =
      outcome.status === 'conflict'
        ? null
        : outcome.status === 'ok' && outcome.acknowledgement.kind === 'committed'
          ? outcome.acknowledgement.generations
          : await this.c.store.readIntent(this.c.bindingName, scopeId);
    if (after !== null && after.handledGeneration >= generation) {
      this.c.health.invocations.succeeded();
      backoff.succeed(scopeId);
      const normal = outcome.status === 'ok' || outcome.status === 'already_handled';
      (normal ? logger.info : logger.warn).call(
        logger,
        {
          ...where,
          trigger: source,
          requestGeneration: generation,
          outcome: outcome.status,
          durationMs: Math.round(outcome.durationMs),
          workerId,
          ordinaryWorkLeft: after.dirtyGeneration > after.cleanGeneration,
        },
        normal ? 'scope invocation acknowledged' : 'worker ended abnormally after its acknowledgement committed; invocation done',
      );
      return after.requestedGeneration > after.handledGeneration;
    }
    switch (outcome.status) {
      case 'ok':
      case 'already_handled':
        this.recordFailure(scopeId, invocation, 'not_acknowledged', new Error('worker returned without a persisted acknowledgement'), outcome);
        return false;
      case 'conflict': {
        const entry = backoff.conflict(scopeId, 'conflict', clock.now());
        table.waitForRetry(scopeId);
        logger.info(
          { ...where, requestGeneration: generation, delayMs: entry.nextRetryAt - clock.now(), consecutiveFailures: entry.consecutiveFailures },
          'progress conflict; re-dispatch after a short delay',
        );
        return false;
      }
      case 'timeout':
        this.recordFailure(scopeId, invocation, 'timeout', new Error(outcome.error?.message ?? 'timeout'), outcome);
        return false;
      default:
        this.recordFailure(
          scopeId,
          invocation,
          outcome.status,
          Object.assign(new Error(outcome.error?.message ?? outcome.status), { name: outcome.error?.name ?? 'Error' }),
          outcome,
        );
        return false;
    }
  }

  private recordFailure(scopeId: string, invocation: Invocation, reason: string, error: Error, outcome?: WorkerOutcome): void {
    const { table, backoff, clock, logger } = this.c;
    const { term, source } = invocation;
    const entry = backoff.fail(scopeId, reason, clock.now(), error.message);
    // A retry's record names the trigger that first brought the key in (RFC 12).
    const trigger = source === 'retry' ? (table.get(scopeId)?.origin ?? 'retry') : source;
    table.waitForRetry(scopeId, trigger);
    this.failures[reason] = (this.failures[reason] ?? 0) + 1;
    this.c.health.invocations.failed(reason, error.message);
    logger.warn(
      {
        binding: this.c.bindingName,
        family: this.c.family,
        scope: scopeId,
        trigger,
        retry: source === 'retry',
        requestGeneration: invocation.generation,
        workerId: invocation.workerId,
        supervisorKey: term.supervisorKey,
        holderId: term.holderId,
        supervisorGeneration: term.supervisorGeneration,
        stage: outcome ? 'invocation' : 'dispatch',
        errorCode: reason,
        errorType: error.name,
        err: error.message,
        attempt: entry.consecutiveFailures,
        retryInMs: entry.nextRetryAt - clock.now(),
      },
      'scope invocation failed',
    );
  }
}
