// SQLite fencing between real processes (RFC section 8, acceptance item 10: "SQLite verifies real
// transaction locks"). Two child processes (test/helpers/sqlite-term-child.ts) open the same
// database file with their own connections. Pins that term replacement and fenced writes are
// serialized by SQLite's write lock (BEGIN IMMEDIATE), not by an unlocked read-then-write:
// a takeover started while another process holds a fenced transaction waits for its commit.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Term } from '../../../src/store/types.ts';
import { createBackend, term, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';
import { fixtureChild } from '../../helpers/fixture-child.ts';
import { withTimeout } from '../../helpers/store-asserts.ts';
import { waitForSqliteBusyWait } from '../../helpers/lock-wait.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CHILD_SCRIPT = 'test/helpers/sqlite-term-child.ts';
/** Bound for any answer that is expected (the children's busy_timeout is 10 s). */
const ANSWER_TIMEOUT_MS = 15_000;

interface Reply {
  id: number;
  ok: boolean;
  result?: any;
  code?: string | null;
  storeError?: boolean;
  name?: string | null;
  message?: string;
}

interface Pending {
  id: number;
  reply: Promise<Reply>;
  /** Resolves with the event line once the child emitted `event` for this command. */
  event(name: string): Promise<Record<string, any>>;
  answered(): boolean;
}

class Child {
  readonly name: string;
  readonly proc: ChildProcessWithoutNullStreams;
  private nextId = 1;
  private readonly replies = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void; done: boolean }>();
  private readonly events = new Map<number, Array<Record<string, any>>>();
  private readonly eventWaiters = new Map<number, Array<() => void>>();
  private stderr = '';
  exited = false;

  constructor(name: string, file: string) {
    this.name = name;
    const entry = fixtureChild(CHILD_SCRIPT);
    this.proc = spawn(process.execPath, [...entry.args, file], { cwd: REPO_ROOT, env: { ...process.env, ...entry.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    readline.createInterface({ input: this.proc.stdout }).on('line', (line) => this.onLine(line));
    this.proc.on('exit', (code, signal) => {
      this.exited = true;
      for (const [id, entry] of this.replies) {
        if (!entry.done) entry.reject(new Error(`${this.name} exited (${code ?? signal}) before answering #${id}; stderr: ${this.stderr}`));
      }
    });
  }

  private onLine(line: string): void {
    let message: Record<string, any>;
    try {
      message = JSON.parse(line);
    } catch {
      this.stderr += `[unparsable stdout] ${line}\n`;
      return;
    }
    const id = message.id as number;
    if (typeof message.event === 'string') {
      const list = this.events.get(id) ?? [];
      list.push(message);
      this.events.set(id, list);
      for (const wake of this.eventWaiters.get(id) ?? []) wake();
      return;
    }
    const entry = this.replies.get(id);
    if (entry && !entry.done) {
      entry.done = true;
      entry.resolve(message as Reply);
    }
  }

  send(op: string, args: Record<string, unknown> = {}): Pending {
    const id = this.nextId++;
    let entry!: { resolve: (r: Reply) => void; reject: (e: Error) => void; done: boolean };
    const reply = new Promise<Reply>((resolve, reject) => {
      entry = { resolve, reject, done: false };
    });
    reply.catch(() => undefined);
    this.replies.set(id, entry);
    this.proc.stdin.write(`${JSON.stringify({ id, op, ...args })}\n`);
    const events = this.events;
    const waiters = this.eventWaiters;
    return {
      id,
      reply: withTimeout(reply, ANSWER_TIMEOUT_MS, `${this.name} ${op} #${id}`),
      answered: () => entry.done,
      event: (name: string) =>
        withTimeout(
          new Promise<Record<string, any>>((resolve) => {
            const check = () => {
              const found = (events.get(id) ?? []).find((e) => e.event === name);
              if (found) {
                resolve(found);
                return true;
              }
              return false;
            };
            if (check()) return;
            const list = waiters.get(id) ?? [];
            list.push(() => {
              check();
            });
            waiters.set(id, list);
          }),
          ANSWER_TIMEOUT_MS,
          `${this.name} ${op} #${id} event ${name}`,
        ),
    };
  }

  /** Sends a command and waits for its final answer. */
  async call(op: string, args: Record<string, unknown> = {}): Promise<Reply> {
    return this.send(op, args).reply;
  }

  /** Sends a command that must succeed and returns its result. */
  async ok(op: string, args: Record<string, unknown> = {}): Promise<any> {
    const reply = await this.call(op, args);
    assert.equal(reply.ok, true, `${this.name} ${op} failed: ${reply.code ?? ''} ${reply.message ?? ''}`);
    return reply.result;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.stdin.end();
    this.proc.kill('SIGTERM');
    await withTimeout(exited, 10_000, `${this.name} exit`).catch(() => {
      this.proc.kill('SIGKILL');
    });
  }
}

function assertTermLost(reply: Reply, what: string): void {
  assert.equal(reply.ok, false, `${what}: expected term_lost, got success ${JSON.stringify(reply.result)}`);
  assert.equal(reply.code, 'term_lost', `${what}: expected term_lost, got ${reply.code}: ${reply.message}`);
  assert.equal(reply.storeError, true);
  assert.equal(reply.name, 'TermLostError');
}

function termOf(result: { supervisorKey: string; holderId: string; supervisorGeneration: number }): Term {
  return term(result.supervisorKey, result.holderId, result.supervisorGeneration);
}

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  if (backend === 'sqlite')
    describe('[sqlite] fencing between two processes on one database file', () => {
      let fx: BackendFixture;
      let a: Child;
      let b: Child;

      before(async () => {
        fx = await createBackend('sqlite');
        const file = (fx.target as { file: string }).file;
        a = new Child('process-a', file);
        b = new Child('process-b', file);
        const [ra, rb] = await Promise.all([a.ok('ready'), b.ok('ready')]);
        assert.notEqual(ra.pid, rb.pid);
        assert.notEqual(ra.pid, process.pid);
      });

      after(async () => {
        await Promise.all([a?.stop(), b?.stop()]);
        await fx?.cleanup();
      });

      test('each process takes the term; the later one wins and the earlier one is fenced out with no trace', async () => {
        const key = 'artifact:proc-seq';
        const binding = 'proc-seq';
        // An owed request to acknowledge, and the key's state before anything fenced.
        await fx.store.acceptRequest(binding, 'k');
        const initial = await fx.store.readIntent(binding, 'k');
        assert.ok(initial);

        const ga = await a.ok('acquire', { key, holder: 'holder-a', ttl: 10_000 });
        const gb = await b.ok('acquire', { key, holder: 'holder-b', ttl: 10_000 });
        assert.equal(ga.outcome, 'acquired');
        assert.equal(gb.outcome, 'acquired');
        assert.equal(ga.expiresAt, null);
        assert.equal(gb.expiresAt, null);
        assert.ok(gb.supervisorGeneration > ga.supervisorGeneration, 'the later takeover has the higher generation');
        const lease = await fx.store.readLease(key);
        assert.deepEqual([lease.holderId, lease.supervisorGeneration, lease.live], ['holder-b', gb.supervisorGeneration, true]);

        const termA = termOf(ga);
        const termB = termOf(gb);
        assertTermLost(await a.call('fencedWrite', { term: termA, binding, scope: 'k' }), 'A assertTerm + markDirty');
        assertTermLost(await a.call('ack', { term: termA, binding, scope: 'k', claimed: 1 }), 'A markDirty + ackInvocation');
        assertTermLost(await a.call('renew', { term: termA, ttl: 10_000 }), 'A renewTerm');
        assert.deepEqual(await fx.store.readIntent(binding, 'k'), initial, "the earlier process's rejected writes left a trace");

        // The winner writes through the same path.
        const written = await b.ok('fencedWrite', { term: termB, binding, scope: 'k' });
        assert.equal(written.dirtyGeneration, initial.dirtyGeneration + 1);
        const acked = await b.ok('ack', { term: termB, binding, scope: 'k', claimed: 1 });
        assert.equal(acked.ack.outcome, 'acknowledged');
        const afterB = await fx.store.readIntent(binding, 'k');
        assert.deepEqual([afterB?.dirtyGeneration, afterB?.handledGeneration], [initial.dirtyGeneration + 2, 1]);

        // And the other way round: A starts again and fences B out.
        const ga2 = await a.ok('acquire', { key, holder: 'holder-a', ttl: 10_000 });
        assert.equal(ga2.supervisorGeneration, gb.supervisorGeneration + 1);
        assertTermLost(await b.call('fencedWrite', { term: termB, binding, scope: 'k' }), 'B after A restarted');
        assert.deepEqual(await fx.store.readIntent(binding, 'k'), afterB);
      });

      test('20 rounds of simultaneous acquisitions: distinct, strictly increasing generations; only the later term writes', async () => {
        const key = 'artifact:proc-race';
        const binding = 'proc-race';
        let last = (await fx.store.readLease(key)).supervisorGeneration;
        let dirty = 0;
        for (let round = 0; round < 20; round++) {
          const pa = a.send('acquire', { key, holder: 'holder-a', ttl: 10_000 });
          const pb = b.send('acquire', { key, holder: 'holder-b', ttl: 10_000 });
          const [ra, rb] = await Promise.all([pa.reply, pb.reply]);
          assert.equal(ra.ok, true, ra.message);
          assert.equal(rb.ok, true, rb.message);
          assert.equal(ra.result.outcome, 'acquired');
          assert.equal(rb.result.outcome, 'acquired');
          const gens = [ra.result.supervisorGeneration, rb.result.supervisorGeneration].sort((x: number, y: number) => x - y);
          assert.deepEqual(gens, [last + 1, last + 2], `round ${round}: each takeover increments the generation once`);
          const [winner, winnerChild, loser, loserChild] =
            ra.result.supervisorGeneration > rb.result.supervisorGeneration ? [ra.result, a, rb.result, b] : [rb.result, b, ra.result, a];
          const lease = await fx.store.readLease(key);
          assert.deepEqual([lease.holderId, lease.supervisorGeneration], [winner.holderId, winner.supervisorGeneration], 'the later takeover wins');
          assertTermLost(await loserChild.call('fencedWrite', { term: termOf(loser), binding, scope: 'k' }), `round ${round} loser`);
          const written = await winnerChild.ok('fencedWrite', { term: termOf(winner), binding, scope: 'k' });
          dirty += 1;
          assert.equal(written.dirtyGeneration, dirty, 'only the winner wrote');
          last = gens[1];
        }
      });

      test('a takeover in another process waits for the write lock of an open fenced transaction (BEGIN IMMEDIATE)', async () => {
        const key = 'artifact:proc-lock';
        const binding = 'proc-lock';
        const ga = await a.ok('acquire', { key, holder: 'holder-a', ttl: 10_000 });
        const termA = termOf(ga);
        const prior = await fx.store.readIntent(binding, 'k');
        assert.equal(prior, null);

        // A: BEGIN IMMEDIATE; assertTerm succeeds; markDirty; the transaction stays open.
        const hold = a.send('hold', { term: termA, binding, scope: 'k' });
        const held = await hold.event('held');
        assert.equal(held.intent.dirtyGeneration, 1);

        // B: the takeover starts and must wait for A's write lock.
        const takeover = b.send('acquire', { key, holder: 'holder-b', ttl: 10_000 });
        await takeover.event('started');
        await waitForSqliteBusyWait(b.proc.pid!, takeover.answered); // B sleeps in SQLite's busy handler
        assert.equal(takeover.answered(), false, 'the takeover must block while A holds the write lock');
        // Readers are not blocked (WAL): nothing of either side is committed yet.
        const during = await fx.store.readLease(key);
        assert.deepEqual([during.holderId, during.supervisorGeneration], ['holder-a', ga.supervisorGeneration]);
        assert.equal(await fx.store.readIntent(binding, 'k'), null);
        assert.equal(hold.answered(), false);

        // A commits; then, and only then, B's takeover completes.
        await a.ok('release', { commit: true });
        const committed = await hold.reply;
        assert.equal(committed.ok, true, committed.message);
        const tb = await takeover.reply;
        assert.equal(tb.ok, true, tb.message);
        assert.equal(tb.result.outcome, 'acquired');
        assert.equal(tb.result.holderId, 'holder-b');
        assert.equal(tb.result.supervisorGeneration, ga.supervisorGeneration + 1);

        // A's write, fenced before the takeover, is committed; A's next fenced writes are rejected.
        assert.equal((await fx.store.readIntent(binding, 'k'))?.dirtyGeneration, 1);
        assertTermLost(await a.call('fencedWrite', { term: termA, binding, scope: 'k' }), 'A after the takeover');
        assertTermLost(await a.call('ack', { term: termA, binding, scope: 'k', claimed: 1 }), 'A ack after the takeover');
        const hold2 = a.send('hold', { term: termA, binding, scope: 'k' });
        assertTermLost(await hold2.reply, 'A hold after the takeover');
        assert.equal((await fx.store.readIntent(binding, 'k'))?.dirtyGeneration, 1, 'rejected fenced writes left a trace');
        const lease = await fx.store.readLease(key);
        assert.deepEqual([lease.holderId, lease.supervisorGeneration], ['holder-b', ga.supervisorGeneration + 1]);
      });

      test('an invalidation (mode switch) in another process waits for an open fenced transaction, then fences it out', async () => {
        const key = 'artifact:proc-inval';
        const binding = 'proc-inval';
        const gb = await b.ok('acquire', { key, holder: 'holder-b', ttl: 10_000 });
        const termB = termOf(gb);

        const hold = b.send('hold', { term: termB, binding, scope: 'k' });
        await hold.event('held');
        const invalidation = a.send('invalidate', { key });
        await invalidation.event('started');
        await waitForSqliteBusyWait(a.proc.pid!, invalidation.answered);
        assert.equal(invalidation.answered(), false, 'the invalidation must block while B holds the write lock');
        assert.equal((await fx.store.readLease(key)).supervisorGeneration, gb.supervisorGeneration);

        await b.ok('release', { commit: true });
        assert.equal((await hold.reply).ok, true);
        const inv = await invalidation.reply;
        assert.equal(inv.ok, true, inv.message);
        assert.equal(inv.result.outcome, 'invalidated');
        assert.equal(inv.result.holderId, null);
        assert.equal(inv.result.supervisorGeneration, gb.supervisorGeneration + 1);

        assert.equal((await fx.store.readIntent(binding, 'k'))?.dirtyGeneration, 1);
        assertTermLost(await b.call('fencedWrite', { term: termB, binding, scope: 'k' }), 'B after the invalidation');
        assert.equal((await fx.store.readIntent(binding, 'k'))?.dirtyGeneration, 1);
        const lease = await fx.store.readLease(key);
        assert.deepEqual([lease.holderId, lease.live], [null, false]);
      });

      test('same holder id in two processes (a restart, ABA): the later start fences the earlier process out of scans, assertion and ack; nothing changes', async () => {
        const key = 'artifact:proc-aba';
        const binding = 'proc-aba';
        const holder = 'holder-same';
        const ids = ['k1', 'k2', 'k3', 'k4', 'k5'];
        await fx.store.transaction(async (tx) => {
          for (const id of ids) await fx.store.markDirty(binding, id, tx);
        });
        await fx.store.acceptRequest(binding, 'k5');

        const first = await a.ok('acquire', { key, holder, ttl: 10_000 });
        const termA = termOf(first);
        const scan = await a.ok('beginScan', { term: termA, binding });
        assert.equal(scan.outcome, 'started');
        const page1 = await a.ok('admit', { term: termA, binding, generation: scan.scanGeneration, after: 0, limit: 2 });
        assert.deepEqual(
          page1.keys.map((k: { scopeId: string }) => k.scopeId),
          ['k1', 'k2'],
        );

        // The same holder id starts again in process B: a new term, generation + 1.
        const second = await b.ok('acquire', { key, holder, ttl: 10_000 });
        assert.equal(second.outcome, 'acquired');
        assert.equal(second.supervisorGeneration, first.supervisorGeneration + 1);
        const termB = termOf(second);

        const snapshot = async () => ({
          state: await fx.store.readBindingState(binding),
          intents: await fx.query('SELECT * FROM pc_artifact_processing_intents WHERE binding_name = ? ORDER BY pending_sequence', [binding]),
          lease: await fx.store.readLease(key),
        });
        const before = await snapshot();
        const stale = (extra: Record<string, unknown> = {}) => ({ term: termA, binding, ...extra });
        assertTermLost(await a.call('admit', stale({ generation: scan.scanGeneration, after: page1.nextAfterSequence, limit: 2 })), 'stale A admitScanPage');
        assertTermLost(await a.call('admit', stale({ generation: scan.scanGeneration, after: 0, limit: 10 })), 'stale A admitScanPage from the first page');
        assertTermLost(await a.call('finish', stale({ generation: scan.scanGeneration })), 'stale A finishScan');
        assertTermLost(await a.call('beginScan', stale()), 'stale A beginScan');
        assertTermLost(await a.call('fencedWrite', stale({ scope: 'k1' })), 'stale A assertTerm + markDirty');
        assertTermLost(await a.call('ack', stale({ scope: 'k5', claimed: 1 })), 'stale A markDirty + ackInvocation');
        const afterStale = await snapshot();
        assert.deepEqual({ ...afterStale.state, dbNow: null }, { ...before.state, dbNow: null }, 'the binding state is unchanged');
        assert.deepEqual(afterStale.intents, before.intents, 'no intent changed');
        assert.deepEqual({ ...afterStale.lease, dbNow: null }, { ...before.lease, dbNow: null });

        // B resumes the same scan: re-running from the first page admits only what A did not (A6).
        const resumed = await b.ok('beginScan', { term: termB, binding });
        assert.deepEqual([resumed.outcome, resumed.scanGeneration], ['resumed', scan.scanGeneration]);
        const page = await b.ok('admit', { term: termB, binding, generation: scan.scanGeneration, after: 0, limit: 10 });
        assert.deepEqual(
          page.keys.map((k: { scopeId: string }) => k.scopeId),
          ['k3', 'k4', 'k5'],
        );
        assert.equal(page.exhausted, true);

        // And back: A starts again with the same holder id; B's term (same holder, older generation) is fenced out.
        const third = await a.ok('acquire', { key, holder, ttl: 10_000 });
        assert.equal(third.supervisorGeneration, second.supervisorGeneration + 1);
        assertTermLost(await b.call('finish', { term: termB, binding, generation: scan.scanGeneration }), 'B finishScan after A restarted');
        assertTermLost(await b.call('ack', { term: termB, binding, scope: 'k5', claimed: 1 }), 'B ack after A restarted');
        assert.equal((await fx.store.readBindingState(binding)).scanInProgress, true);
        const finished = await a.ok('finish', { term: termOf(third), binding, generation: scan.scanGeneration });
        assert.equal(finished.outcome, 'finished');
      });

      test('a held fenced transaction that rolls back leaves no trace, and the waiting takeover still completes', async () => {
        const key = 'artifact:proc-rollback';
        const binding = 'proc-rollback';
        const ga = await a.ok('acquire', { key, holder: 'holder-a', ttl: 10_000 });
        const hold = a.send('hold', { term: termOf(ga), binding, scope: 'k' });
        await hold.event('held');
        const takeover = b.send('acquire', { key, holder: 'holder-b', ttl: 10_000 });
        await takeover.event('started');
        await waitForSqliteBusyWait(b.proc.pid!, takeover.answered);
        assert.equal(takeover.answered(), false);
        await a.ok('release', { commit: false });
        const rolledBack = await hold.reply;
        assert.equal(rolledBack.ok, false);
        assert.match(rolledBack.message ?? '', /rollback requested/);
        const tb = await takeover.reply;
        assert.equal(tb.ok, true, tb.message);
        assert.equal(tb.result.supervisorGeneration, ga.supervisorGeneration + 1);
        assert.equal(await fx.store.readIntent(binding, 'k'), null);
      });
    });
}
