/**
 * Group commit of acknowledgements the supervisor makes on behalf of its workers.
 *
 * A processor that acknowledges without business writes (`ctx.acknowledge()`: a NOOP, a candidate
 * awaiting review) does not commit in the worker: its result message carries the request, and the
 * supervisor commits it here, fenced by the same term the invocation ran under. Every request
 * that arrives within one turn of the event loop (up to `maxBatch`, per term and binding) shares
 * one call of `pc_aps_acknowledge_batch` (one transaction, one commit), so N workers finishing
 * together cost one commit instead of N and, on SQLite, the workers of a no-op family never take
 * the write lock. While a commit of a (term, binding) is under way, its later requests wait and go
 * together when it ends; each batch asserts its term when it commits, so waiting longer never lets
 * a lost term's acknowledgement through.
 *
 * On SQLite (in this process, no round trip to save) a group is one BEGIN IMMEDIATE ... COMMIT
 * holding one pc_aps_ack_invocation per request (the fenced acknowledgement a worker runs in its
 * own commit: the term is asserted by each, in the same transaction), and a group spans the
 * bindings of one term: with one worker per family every acknowledgement still shares a commit.
 * (issue 12 item 3: the list form's split, checks and ordered result cost about 2.4x the single
 * statements per key, and per-binding groups left one commit per invocation with 4 families.)
 *
 * The guarantees are those of a single acknowledgement: nothing is reported done before its
 * transaction committed (the caller waits for the committed row); a lost term rejects the whole
 * batch with TermLostError; any other error rolls the batch back and each request is retried in
 * its own transaction, so one bad key cannot fail the others.
 */
import { DatabaseBusyError, TermLostError } from '../store/errors.ts';
import type { AckRequest, AckResult, Store, Term } from '../store/types.ts';
import { TurnBatch, perStore, type Pending } from './turn-batch.ts';
import { ATTR, SPANS, activeLink, traced } from '../observability/tracing.ts';
import type { Link } from '@opentelemetry/api';

export interface AckBatcherStats {
  /** Acknowledgements committed through the batcher. */
  acknowledgements: number;
  /** Transactions used for them (batches plus individual retries). */
  transactions: number;
}

export class AckBatcher {
  readonly stats: AckBatcherStats = { acknowledgements: 0, transactions: 0 };
  private readonly batch: TurnBatch<Term, AckRequest, AckResult>;
  private readonly links = new WeakMap<AckRequest, Link>();

  /**
   * @param maxInFlight commits of one (term, binding) under way at once (default 1): requests that
   *   arrive while one commits wait for it and share the next transaction (issue 12 item 3: with
   *   one turn only, 0.43 single calls per invocation were left on MariaDB with 4 workers)
   */
  constructor(
    private readonly store: Store,
    maxBatch = 500,
    maxInFlight = 1,
  ) {
    this.batch = new TurnBatch(
      setImmediate,
      maxBatch,
      (term, items) =>
        traced(SPANS.ackCommit, { [ATTR.binding]: items[0].request.bindingName, [ATTR.count]: items.length }, () => this.commit(term, items), {
          root: true,
          links: items.map((i) => this.links.get(i.request)).filter((l): l is Link => !!l),
        }),
      maxInFlight,
    );
  }

  /** Resolves with the row the committed acknowledgement left; rejects with TermLostError when the term is gone. */
  acknowledge(term: Term, request: AckRequest): Promise<AckResult> {
    const termKey = `${term.supervisorKey}\u0000${term.holderId}\u0000${term.supervisorGeneration}`;
    const key = this.store.backend === 'sqlite' ? termKey : `${termKey}\u0000${request.bindingName}`;
    const link = activeLink(); // the dispatch this acknowledgement belongs to
    if (link) this.links.set(request, link);
    return this.batch.add(key, term, request);
  }

  private async commit(term: Term, items: Pending<AckRequest, AckResult>[]): Promise<void> {
    let results: AckResult[];
    try {
      this.stats.transactions += 1;
      results =
        items.length === 1
          ? [await this.store.acknowledge(term, items[0].request)]
          : this.store.backend === 'sqlite'
            ? await this.store.transaction(async (tx) => {
                const rows: AckResult[] = [];
                for (const item of items) rows.push(await this.store.ackInvocation(term, item.request, tx));
                return rows;
              })
            : await this.store.acknowledgeBatch(
                term,
                items[0].request.bindingName,
                items.map((item) => item.request),
              );
    } catch (error) {
      // A lost term, or a lock that stayed taken past its bound (no key is at fault): all fail alike.
      if (error instanceof TermLostError || error instanceof DatabaseBusyError || items.length === 1) {
        for (const item of items) item.reject(error);
        return;
      }
      // Isolate the failing request: every other one commits on its own.
      await Promise.all(
        items.map(async (item) => {
          try {
            this.stats.transactions += 1;
            const result = await this.store.acknowledge(term, item.request);
            this.stats.acknowledgements += 1;
            item.resolve(result);
          } catch (single) {
            item.reject(single);
          }
        }),
      );
      return;
    }
    this.stats.acknowledgements += items.length;
    items.forEach((item, i) => item.resolve(results[i]));
  }
}

/** The supervisor-side batcher of a store (one per store, shared by its partitions). */
export const ackBatcherFor = perStore((store: Store) => new AckBatcher(store));
