// The host's side of the commit bound (src/runtime/transaction-watchdog.ts), driven by a
// ManualClock and a fake child: a transaction still open at its budget is ended (MySQL: its
// session, SQLite: the child), one closed in time is not, a new open restarts the budget, and an
// exited child leaves no timer.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { TransactionWatchdog } from '../../src/runtime/transaction-watchdog.ts';

const logger = createLogger({ level: 'silent' });
const mysql = { backend: 'mysql' as const, host: 'h', port: 3306, user: 'p', password: 'x', database: 'd' };

function fakeChild(): ChildProcess & { signals: string[] } {
  const child = new EventEmitter() as unknown as ChildProcess & { signals: string[] };
  child.signals = [];
  (child as unknown as { kill: (s: string) => boolean }).kill = (s: string) => {
    child.signals.push(s);
    return true;
  };
  return child;
}

test('MySQL: a transaction open at its budget has its session ended; one closed in time does not', async () => {
  const clock = new ManualClock();
  const killed: number[] = [];
  const dog = new TransactionWatchdog({ budgetMs: 3000, target: mysql, logger, clock, killSession: async (id) => void killed.push(id) });
  const child = fakeChild();
  dog.watch(child);
  child.emit('message', { type: 'tx', state: 'open', connectionId: 41 });
  await clock.advance(2999);
  child.emit('message', { type: 'tx', state: 'closed', connectionId: null });
  await clock.advance(5000);
  assert.deepEqual(killed, [], 'closed within its budget');
  child.emit('message', { type: 'tx', state: 'open', connectionId: 42 });
  await clock.advance(2000);
  child.emit('message', { type: 'tx', state: 'open', connectionId: 43 }); // a new transaction restarts the budget
  await clock.advance(2000);
  assert.deepEqual(killed, []);
  await clock.advance(1000);
  assert.deepEqual(killed, [43]);
  assert.equal(dog.ended, 1);
  assert.deepEqual(child.signals, []);
});

test('MySQL: a session that cannot be ended from outside ends with its process', async () => {
  const clock = new ManualClock();
  const dog = new TransactionWatchdog({ budgetMs: 1000, target: mysql, logger, clock, killSession: async () => Promise.reject(new Error('denied')) });
  const child = fakeChild();
  dog.watch(child);
  child.emit('message', { type: 'tx', state: 'open', connectionId: 7 });
  await clock.advance(1000);
  assert.deepEqual(child.signals, ['SIGKILL']);
});

test('SQLite: the child is killed at its budget; an exited child leaves no timer', async () => {
  const clock = new ManualClock();
  const dog = new TransactionWatchdog({ budgetMs: 1000, target: { backend: 'sqlite', file: 'x.sqlite' }, logger, clock });
  const child = fakeChild();
  dog.watch(child);
  child.emit('message', { type: 'tx', state: 'open', connectionId: null });
  await clock.advance(1000);
  assert.deepEqual(child.signals, ['SIGKILL']);
  const gone = fakeChild();
  dog.watch(gone);
  gone.emit('message', { type: 'tx', state: 'open', connectionId: null });
  gone.emit('exit', 0, null);
  await clock.advance(5000);
  assert.deepEqual(gone.signals, []);
  // Messages of other kinds are not the watchdog's.
  child.emit('message', { type: 'result', invocationId: 1 });
  assert.equal(dog.ended, 1);
});
