// Issue 17 item 7: each lease event of a term keeper gets its own log message, with rounded
// figures and the failing statement named (not the renewal's timeout text for an acquisition;
// a renewal answering after the local deadline is not an acquisition failure). The keeper runs
// against a scripted in-memory lease (the messages are the subject; the database behaviour of
// the lease operations is pinned by test/contract/suites/terms.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { LEASE_MESSAGES } from '../../src/runtime/lease-events.ts';
import { TermKeeper } from '../../src/runtime/term-keeper.ts';
import type { Store, TermResult } from '../../src/store/types.ts';

type Step = 'ok' | 'fail' | 'hang';
type Op = 'acquire' | 'renew' | 'invalidate';

class ScriptedLease {
  readonly steps: Record<Op, Step[]> = { acquire: [], renew: [], invalidate: [] };
  readonly hung: Array<(value: TermResult) => void> = [];
  generation = 0;
  readonly backend = 'mysql' as const;

  private answer(op: Op, value: () => TermResult): Promise<TermResult> {
    const step = this.steps[op].shift() ?? 'ok';
    if (step === 'fail') return Promise.reject(new Error(`${op} refused (scripted)`));
    if (step === 'hang')
      return new Promise((resolve) => {
        this.hung.push(() => resolve(value()));
      });
    return Promise.resolve(value());
  }

  private result(outcome: TermResult['outcome']): TermResult {
    return {
      outcome,
      supervisorKey: 'global',
      holderId: 'h1',
      supervisorGeneration: this.generation,
      expiresAt: null,
      dbNow: new Date(),
    } as unknown as TermResult;
  }

  acquireTerm(): Promise<TermResult> {
    return this.answer('acquire', () => {
      this.generation += 1;
      return this.result('acquired');
    });
  }

  renewTerm(): Promise<TermResult> {
    return this.answer('renew', () => this.result('renewed'));
  }

  invalidateTerm(): Promise<TermResult> {
    return this.answer('invalidate', () => this.result('invalidated' as TermResult['outcome']));
  }
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('lease event messages', () => {
  test('one message per event, rounded figures, the statement named', async () => {
    const logs: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: 'info',
      destination: {
        write(line: string) {
          for (const l of line.split('\n')) if (l.trim()) logs.push(JSON.parse(l));
        },
      },
    });
    const lease = new ScriptedLease();
    const keeper = new TermKeeper(lease as unknown as Store, { supervisorKey: 'global', holderId: 'h1', ttlMs: 1500, renewEveryMs: 200, logger });
    const messages = () => logs.map((l) => l.msg);
    const keepAlive = setInterval(() => undefined, 1000); // the keeper's timers are unref'd
    try {
      // 1. The first acquisition hangs past its bound: an acquisition failure, with its own text.
      lease.steps.acquire.push('hang');
      await keeper.start();
      assert.deepEqual(messages(), [LEASE_MESSAGES.acquisitionFailed]);
      assert.equal(logs[0].err, 'lease acquisition did not answer within 1000 ms');
      assert.equal(logs[0].attempt, 1);
      assert.ok(Number.isInteger(logs[0].retryInMs));

      // 2. The retry takes the term: one 'acquired' line.
      await until(() => keeper.state === 'leader');
      assert.deepEqual(messages().slice(1), [LEASE_MESSAGES.acquired]);

      // 3. Two failed renewals (suspended, then still suspended), then a good one (resumed).
      lease.steps.renew.push('fail', 'fail');
      await until(() => messages().includes(LEASE_MESSAGES.renewalResumed));
      assert.deepEqual(messages().slice(2), [LEASE_MESSAGES.renewalFailed, LEASE_MESSAGES.renewalFailedAgain, LEASE_MESSAGES.renewalResumed]);

      // 4. A failure, then renewals that hang until the local deadline: their timeouts carry
      // rounded bounds, the deadline is one 'term lost' line, and a renewal answering after it is
      // never reported as an acquisition failure.
      const before = logs.length;
      lease.steps.renew.push('fail', 'hang', 'hang', 'hang', 'hang', 'hang', 'hang', 'hang', 'hang');
      lease.steps.invalidate.push('ok');
      await until(() => messages().includes(LEASE_MESSAGES.lost));
      const lost = logs.filter((l) => l.msg === LEASE_MESSAGES.lost);
      assert.equal(lost.length, 1);
      assert.equal(lost[0].reason, 'renewal_deadline_passed');
      for (const resolve of lease.hung.splice(0)) resolve({} as TermResult);
      await until(() => keeper.state === 'leader' && lease.generation === 3);
      const episode = logs.slice(before);
      for (const l of episode) {
        assert.ok(Object.values(LEASE_MESSAGES).includes(l.msg as never), `unknown lease message ${String(l.msg)}`);
        assert.notEqual(l.msg, LEASE_MESSAGES.acquisitionFailed, 'no acquisition failure in a renewal episode');
        for (const field of ['remainingMs', 'retryInMs']) if (field in l) assert.ok(Number.isInteger(l[field]), `${field} ${String(l[field])} is rounded`);
        const bound = /within (\S+) ms/.exec(String(l.err ?? ''));
        if (bound) assert.match(bound[1], /^\d+$/, `bound ${bound[1]} is rounded`);
      }
      assert.equal(episode.filter((l) => l.msg === LEASE_MESSAGES.renewalFailed).length, 1, 'one suspension line');
      assert.ok(
        episode.some((l) => /^lease renewal did not answer within \d+ ms$/.test(String(l.err))),
        'a hung renewal names the renewal',
      );
      assert.equal(episode[episode.length - 1].msg, LEASE_MESSAGES.acquired);

      // 5. A fenced write reports the term lost while a renewal hangs; the renewal's late answer
      // is reported as such.
      lease.steps.renew.push('hang');
      await until(() => lease.hung.length === 1);
      const generation = keeper.term!.supervisorGeneration;
      lease.steps.invalidate.push('ok');
      keeper.reportLost(keeper.term!);
      await until(() => keeper.state === 'leader' && keeper.term!.supervisorGeneration > generation);
      const mark = logs.length;
      lease.hung.splice(0)[0]({} as TermResult);
      await until(() => messages().slice(mark).includes(LEASE_MESSAGES.lateRenewal));
      const late = logs.slice(mark).find((l) => l.msg === LEASE_MESSAGES.lateRenewal)!;
      assert.equal(late.supervisorGeneration, generation);
      assert.equal(late.outcome, 'renewed');
      assert.equal(logs.filter((l) => l.msg === LEASE_MESSAGES.lost && l.supervisorGeneration === generation).length, 1);
    } finally {
      await keeper.stop(false);
      clearInterval(keepAlive);
    }
  });
});
