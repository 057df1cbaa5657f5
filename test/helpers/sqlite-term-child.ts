/**
 * Child process for the SQLite fencing tests (test/contract/suites/fencing-processes.ts).
 *
 *   node --import tsx test/helpers/sqlite-term-child.ts <sqlite file>
 *
 * Opens its own SqliteStore on the file (its own connection, busy_timeout 10 s) and executes one
 * JSON command per stdin line: { "id": n, "op": "...", ...arguments }. Every command is answered
 * by exactly one final line on stdout: { "id": n, "ok": true, "result": ... } or
 * { "id": n, "ok": false, "code": <StoreError code or null>, "name": ..., "message": ... }.
 * Some commands also emit progress lines: { "id": n, "event": "..." }.
 *
 * Commands:
 *   ready                          answers once the store is open
 *   acquire {key, holder, ttl}     Store.acquireTerm; emits event "started" just before the
 *                                  (synchronous, possibly lock-waiting) call
 *   invalidate {key, expected?}    Store.invalidateTerm; emits "started" like acquire
 *   renew {term, ttl}              Store.renewTerm
 *   readLease {key}                Store.readLease
 *   readIntent {binding, scope}    Store.readIntent
 *   fencedWrite {term, binding, scope}
 *                                  store.transaction: assertTerm, then markDirty; commits
 *   ack {term, binding, scope, claimed, clean?}
 *                                  store.transaction: markDirty (the business write) first,
 *                                  then ackInvocation in the same transaction; commits
 *   hold {term, binding, scope}    store.transaction (BEGIN IMMEDIATE): assertTerm, markDirty,
 *                                  emits event "held" with the intent, then waits for
 *                                  "release"; the final answer comes after COMMIT/ROLLBACK
 *   release {commit: boolean}      ends the held transaction (commit, or rollback by throwing)
 *   beginScan {term, binding, intervalSeconds}
 *                                  Store.beginScan with an interval policy
 *   admit {term, binding, generation, after, limit}
 *                                  Store.admitScanPage (one page, its own transaction)
 *   finish {term, binding, generation}
 *                                  Store.finishScan
 *   exit                           closes the store and exits
 */
import readline from 'node:readline';
import { StoreError } from '../../src/store/errors.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Term } from '../../src/store/types.ts';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: sqlite-term-child.ts <sqlite file>\n');
  process.exit(2);
}

const store = SqliteStore.open(file);

type Command = { id: number; op: string; [key: string]: unknown };

function send(message: Record<string, unknown>): void {
  // stdout is a pipe: writes are synchronous on Linux, so an event line is out before a
  // following synchronous (lock-waiting) SQLite call.
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function failure(id: number, error: unknown): Record<string, unknown> {
  const e = error as { code?: unknown; name?: unknown; message?: unknown };
  return {
    id,
    ok: false,
    code: error instanceof StoreError ? error.code : typeof e?.code === 'string' ? e.code : null,
    storeError: error instanceof StoreError,
    name: typeof e?.name === 'string' ? e.name : null,
    message: typeof e?.message === 'string' ? e.message : String(error),
  };
}

const ROLLBACK = new Error('rollback requested by the test');
let releaseHeld: ((commit: boolean) => void) | null = null;

async function execute(cmd: Command): Promise<unknown> {
  switch (cmd.op) {
    case 'ready':
      return { pid: process.pid };
    case 'acquire':
      send({ id: cmd.id, event: 'started' });
      return store.acquireTerm(cmd.key as string, cmd.holder as string, (cmd.ttl as number) ?? 10_000);
    case 'invalidate':
      send({ id: cmd.id, event: 'started' });
      return store.invalidateTerm(cmd.key as string, cmd.expected as { holderId: string; supervisorGeneration: number } | undefined);
    case 'renew':
      return store.renewTerm(cmd.term as Term, (cmd.ttl as number) ?? 10_000);
    case 'readLease':
      return store.readLease(cmd.key as string);
    case 'readIntent':
      return store.readIntent(cmd.binding as string, cmd.scope as string);
    case 'fencedWrite':
      return store.transaction(async (tx) => {
        await store.assertTerm(tx, cmd.term as Term);
        return store.markDirty(cmd.binding as string, cmd.scope as string, tx);
      });
    case 'ack':
      return store.transaction(async (tx) => {
        const business = await store.markDirty(cmd.binding as string, cmd.scope as string, tx);
        const ack = await store.ackInvocation(
          cmd.term as Term,
          {
            bindingName: cmd.binding as string,
            scopeId: cmd.scope as string,
            claimedRequestGeneration: cmd.claimed as number,
            cleanThroughDirtyGeneration: (cmd.clean as number | undefined) ?? null,
          },
          tx,
        );
        return { business, ack };
      });
    case 'hold': {
      if (releaseHeld) throw new Error('a transaction is already held');
      return store.transaction(async (tx) => {
        await store.assertTerm(tx, cmd.term as Term);
        const intent = await store.markDirty(cmd.binding as string, cmd.scope as string, tx);
        const commit = await new Promise<boolean>((resolve) => {
          releaseHeld = resolve;
          send({ id: cmd.id, event: 'held', intent });
        });
        releaseHeld = null;
        if (!commit) throw ROLLBACK;
        return intent;
      });
    }
    case 'release': {
      if (!releaseHeld) throw new Error('no transaction is held');
      releaseHeld(cmd.commit !== false);
      return { released: true };
    }
    case 'beginScan':
      return store.beginScan(cmd.term as Term, cmd.binding as string, { kind: 'interval', intervalSeconds: (cmd.intervalSeconds as number) ?? 3600 });
    case 'admit':
      return store.admitScanPage(cmd.term as Term, cmd.binding as string, cmd.generation as number, cmd.after as number, cmd.limit as number);
    case 'finish':
      return store.finishScan(cmd.term as Term, cmd.binding as string, cmd.generation as number);
    case 'exit':
      await store.close();
      setImmediate(() => process.exit(0));
      return { closing: true };
    default:
      throw new Error(`unknown op ${JSON.stringify(cmd.op)}`);
  }
}

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  let cmd: Command;
  try {
    cmd = JSON.parse(line) as Command;
  } catch (error) {
    send(failure(-1, error));
    return;
  }
  // Commands run concurrently (a held transaction must not stop "release" from being read);
  // store operations themselves are serialized by the store's mutex.
  Promise.resolve()
    .then(() => execute(cmd))
    .then(
      (result) => send({ id: cmd.id, ok: true, result }),
      (error) => send(failure(cmd.id, error)),
    );
});
lines.on('close', () => {
  void store.close().finally(() => process.exit(0));
});
