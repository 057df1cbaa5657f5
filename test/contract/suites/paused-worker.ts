// MySQL/OceanBase (issue 17 item 3, RFC 1): a worker process paused (SIGSTOP) inside its fenced
// commit does not block failover. The worker's store bounds, on the server, how long its
// transaction can stay open while the client is silent (one lease TTL: MariaDB
// idle_transaction_timeout); a standby takes over within TTL + that bound after the pause, and
// once the worker resumes (SIGCONT) its stale commit is refused and left nothing behind.
// SQLite is not here: its single writer is the host's concern (issue 17 item 1).
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { LEASE_TTL_VARIABLE } from '../../../src/store/mysql/transaction-bound.ts';
import type { Store, Term } from '../../../src/store/types.ts';
import { createBackend, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';
import { fixtureChild } from '../../helpers/fixture-child.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const TTL_MS = 2000;
/** The worker's transaction bound: one TTL (its environment carries the runtime's lease TTL). */
const BOUND_MS = TTL_MS;
/** Scheduling slack on a shared machine (the standby polls every 100 ms). */
const SLACK_MS = 1500;

type Reply = { id: number; ok: boolean; result?: any; code?: string | null; message?: string; event?: string; dirtyGeneration?: number };

/** A worker-like child process (test/helpers/mysql-fenced-child.ts) speaking JSON lines. */
class FencedChild {
  readonly proc: ChildProcessWithoutNullStreams;
  private nextId = 1;
  private readonly waiters = new Map<string, (r: Reply) => void>();
  private readonly seen = new Map<string, Reply>();
  stderr = '';

  constructor(url: string) {
    const entry = fixtureChild('test/helpers/mysql-fenced-child.ts');
    const env = { ...process.env, ...entry.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: url, [LEASE_TTL_VARIABLE]: String(TTL_MS / 1000) };
    this.proc = spawn(process.execPath, entry.args, { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    readline.createInterface({ input: this.proc.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as Reply;
      const tag = `${message.id}:${message.event ?? 'reply'}`;
      this.seen.set(tag, message);
      this.waiters.get(tag)?.(message);
    });
  }

  private wait(tag: string): Promise<Reply> {
    const known = this.seen.get(tag);
    if (known) return Promise.resolve(known);
    return new Promise((resolve) => this.waiters.set(tag, resolve));
  }

  send(op: string, args: Record<string, unknown> = {}): { reply: Promise<Reply>; event(name: string): Promise<Reply> } {
    const id = this.nextId++;
    this.proc.stdin.write(`${JSON.stringify({ id, op, ...args })}\n`);
    return { reply: this.wait(`${id}:reply`), event: (name) => this.wait(`${id}:${name}`) };
  }
}

/** Acquires for `holder` until it leads; an acquisition waiting on a lock is simply awaited. */
async function leadWithin(store: Store, key: string, holder: string, ms: number): Promise<{ term: Term; tookMs: number } | null> {
  const started = performance.now();
  const deadline = started + ms;
  while (performance.now() < deadline) {
    const attempt = store.acquireTerm(key, holder, 30_000);
    attempt.catch(() => undefined);
    const result = await Promise.race([attempt, new Promise<null>((r) => setTimeout(() => r(null), Math.max(0, deadline - performance.now())))]);
    if (result?.outcome === 'acquired') {
      return { term: { supervisorKey: key, holderId: holder, supervisorGeneration: result.supervisorGeneration }, tookMs: performance.now() - started };
    }
    if (result === null) return null;
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  if (backend === 'mysql')
    describe('[mysql] a worker paused inside its fenced commit', () => {
      let fx: BackendFixture;
      let child: FencedChild;
      before(async () => {
        fx = await createBackend('mysql');
        child = new FencedChild(fx.url);
        await child.send('ready').reply;
      });
      after(async () => {
        try {
          child.proc.kill('SIGCONT');
        } catch {
          /* already gone */
        }
        child.proc.kill('SIGKILL');
        await fx.cleanup();
      });

      test('a standby leads within TTL + the transaction bound; resumed, the stale commit is refused', async () => {
        const key = 'artifact:paused-worker';
        const lease = await fx.store.acquireTerm(key, 'leader-a', TTL_MS);
        const term: Term = { supervisorKey: key, holderId: 'leader-a', supervisorGeneration: lease.supervisorGeneration };
        const hold = child.send('hold', { term, binding: 'paused-worker', scope: 'k' });
        assert.equal((await hold.event('held')).dirtyGeneration, 1);
        // Worker and leader stop together: no renewal, the worker's transaction stays open.
        process.kill(child.proc.pid!, 'SIGSTOP');
        const pausedAt = performance.now();
        const standby = fx.openStore();
        const led = await leadWithin(standby, key, 'standby-b', TTL_MS + BOUND_MS + SLACK_MS);
        const sincePause = performance.now() - pausedAt;
        console.log(
          `standby led ${led ? `${sincePause.toFixed(0)} ms after the pause` : `not within ${sincePause.toFixed(0)} ms`} (TTL ${TTL_MS} ms, bound ${BOUND_MS} ms)`,
        );
        assert.ok(led, `the standby did not lead within TTL + bound + ${SLACK_MS} ms while the worker was paused`);
        assert.equal(led.term.supervisorGeneration, term.supervisorGeneration + 1);

        process.kill(child.proc.pid!, 'SIGCONT');
        child.send('release');
        const answer = await hold.reply;
        assert.equal(answer.ok, false, 'the stale commit must be refused');
        console.log(`stale commit refused: ${answer.message}`);
        assert.equal(await fx.store.readIntent('paused-worker', 'k'), null, 'nothing of the stale transaction was committed');
        const now = await fx.store.readLease(key);
        assert.deepEqual([now.holderId, now.supervisorGeneration, now.live], ['standby-b', led.term.supervisorGeneration, true]);
        await standby.fencedTransaction(led.term, (tx) => standby.markDirty('paused-worker', 'k', tx));
        assert.equal((await fx.store.readIntent('paused-worker', 'k'))?.dirtyGeneration, 1);
      });
    });
}
