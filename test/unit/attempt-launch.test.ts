// attempt-launch.ts before any process: a task whose handler version the registry does not know
// fails closed with its own code and the relay runs, and no warm process is taken for it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { launchAttempt, type LaunchContext } from '../../src/tasks/attempt-launch.ts';
import { UnknownHandlerError } from '../../src/tasks/registry.ts';
import type { ClaimedTask } from '../../src/tasks/task-store.ts';

test('an unknown handler version fails closed without taking a process', async () => {
  const failed: unknown[][] = [];
  let taken = 0;
  let relayed = 0;
  const tracked: Promise<unknown>[] = [];
  const unknown = new UnknownHandlerError('unknown_handler_version', 'handler demo@v9 is not registered');
  const ctx = {
    workerId: 'w1',
    tasks: {
      transaction: (fn: (tx: unknown) => Promise<unknown>) => fn('tx'),
      fail: async (...args: unknown[]) => {
        failed.push(args);
      },
    },
    registry: {
      modulePath: () => {
        throw unknown;
      },
    },
    logger: pino({ level: 'silent' }),
    pool: {
      take: () => {
        taken += 1;
      },
    },
    running: new Map(),
    track: <T>(p: Promise<T>) => {
      tracked.push(p);
      return p;
    },
    notify: () => {
      relayed += 1;
    },
    stopped: () => false,
  } as unknown as LaunchContext;
  const task = { taskId: 7, attemptToken: 'tok', taskType: 'demo', handlerVersion: 'v9' } as unknown as ClaimedTask;
  launchAttempt(ctx, task);
  await Promise.all(tracked);
  assert.equal(taken, 0);
  assert.equal(ctx.running.size, 0);
  assert.equal(relayed, 1);
  assert.equal(failed.length, 1);
  assert.deepEqual(failed[0]!.slice(0, 2), [7, 'tok']);
  assert.equal(failed[0]![2], 'unknown_handler_version');
  assert.match(String(failed[0]![3]), /not registered/);
});
