// The runner's group commit of reported successes (src/tasks/success-committer.ts), against a
// scripted commit function: grouping, one item per task per batch, a failed batch item by item.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { SuccessCommitter } from '../../src/tasks/success-committer.ts';
import type { SuccessItem, SuccessOutcome } from '../../src/tasks/task-store.ts';

const logger = createLogger({ level: 'silent' });
const neverAlone = async (): Promise<SuccessOutcome> => {
  throw new Error('no item is committed alone in this test');
};
const item = (taskId: number): SuccessItem => ({ taskId, attemptToken: 'a'.repeat(32), resultJson: 'null' });

function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}

test('successes reported while a batch is in flight are committed together in the next call, by task id', async () => {
  const calls: number[][] = [];
  const first = gate();
  const committer = new SuccessCommitter(
    async (items) => {
      calls.push(items.map((i) => i.taskId));
      if (calls.length === 1) await first.opened;
      return items.map((i): SuccessOutcome => (i.taskId === 7 ? 'cancel_requested' : 'succeeded'));
    },
    neverAlone,
    logger,
  );
  const a = committer.commit(item(1));
  await new Promise((r) => setImmediate(r)); // the first batch is in flight
  assert.deepEqual(calls, [[1]]);
  const later = [9, 7, 8].map((id) => committer.commit(item(id)));
  first.open();
  assert.deepEqual(await Promise.all([a, ...later]), ['succeeded', 'succeeded', 'cancel_requested', 'succeeded']);
  assert.deepEqual(calls, [[1], [7, 8, 9]]);
  assert.deepEqual([committer.batches, committer.items], [2, 4]);
});

test('a batch holds one item per task and at most maxBatch items; the rest waits for the next', async () => {
  const calls: number[][] = [];
  const first = gate();
  const committer = new SuccessCommitter(
    async (items) => {
      calls.push(items.map((i) => i.taskId));
      if (calls.length === 1) await first.opened;
      return items.map((): SuccessOutcome => 'attempt_lost');
    },
    neverAlone,
    logger,
    { maxBatch: 2 },
  );
  const all = [committer.commit(item(5)), committer.commit(item(3)), committer.commit(item(3)), committer.commit(item(4)), committer.commit(item(2))];
  first.open();
  assert.deepEqual(await Promise.all(all), Array(5).fill('attempt_lost'));
  assert.deepEqual(calls, [[3, 5], [3, 4], [2]]);
});

test('an item that fails alone too ends with error; the batches after it go on', async () => {
  let failures = 1;
  let alone = 0;
  const committer = new SuccessCommitter(
    async (items) => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('SQLITE_BUSY');
      }
      return items.map((): SuccessOutcome => 'succeeded');
    },
    async () => {
      alone += 1;
      throw new Error('SQLITE_BUSY');
    },
    logger,
  );
  assert.equal(await committer.commit(item(1)), 'error');
  assert.equal(alone, 1, 'tried alone once');
  assert.equal(await committer.commit(item(2)), 'succeeded');
});

/** A committer whose batches all succeed; `calls` lists each batch's task ids. */
function recordingCommitter(options: { maxBytes?: number } = {}): { committer: SuccessCommitter; calls: number[][] } {
  const calls: number[][] = [];
  const committer = new SuccessCommitter(
    async (items) => {
      calls.push(items.map((i) => i.taskId));
      return items.map((): SuccessOutcome => 'succeeded');
    },
    neverAlone,
    logger,
    options,
  );
  return { committer, calls };
}

test('successes reported in one turn of the event loop go in one batch (SQLite commits synchronously)', async () => {
  const { committer, calls } = recordingCommitter();
  const all = [3, 1, 2].map((id) => committer.commit(item(id)));
  assert.deepEqual(await Promise.all(all), ['succeeded', 'succeeded', 'succeeded']);
  assert.deepEqual(calls, [[1, 2, 3]]);
  await committer.idle();
});

test('a batch that fails whole is committed item by item: one bad item fails only itself', async () => {
  const singles: number[] = [];
  const committer = new SuccessCommitter(
    async (items) => {
      if (items.some((i) => i.taskId === 2)) throw new Error('ER_NET_PACKET_TOO_LARGE');
      return items.map((): SuccessOutcome => 'succeeded');
    },
    async (i) => {
      singles.push(i.taskId);
      if (i.taskId === 2) throw new Error('ER_DATA_TOO_LONG');
      return i.taskId === 3 ? 'cancel_requested' : 'succeeded';
    },
    logger,
  );
  const first = await gateFirst(committer);
  const all = [committer.commit(item(1)), committer.commit(item(2)), committer.commit(item(3))];
  first.release();
  assert.deepEqual(await Promise.all([first.done, ...all]), ['succeeded', 'succeeded', 'error', 'cancel_requested']);
  assert.deepEqual(singles, [1, 2, 3]);
});

test('a batch holds at most maxBytes of results; a larger item goes alone', async () => {
  const { committer, calls } = recordingCommitter({ maxBytes: 10 });
  const big = (taskId: number, n: number): SuccessItem => ({ ...item(taskId), resultJson: JSON.stringify('x'.repeat(n)) });
  const first = await gateFirst(committer);
  const all = [committer.commit(big(1, 3)), committer.commit(big(2, 3)), committer.commit(big(3, 30)), committer.commit(big(4, 1))];
  first.release();
  await Promise.all([first.done, ...all]);
  // 5 + 5 bytes fit, the 32-byte item goes alone, the last one after it.
  assert.deepEqual(calls, [[1, 2], [3], [4]]);
});

/** Holds the committer's first batch (task 999, alone: it started) so that the items after it queue. */
async function gateFirst(committer: SuccessCommitter): Promise<{ release: () => void; done: Promise<unknown> }> {
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const original = (committer as unknown as { commitBatch: (items: SuccessItem[]) => Promise<SuccessOutcome[]> }).commitBatch;
  (committer as unknown as { commitBatch: typeof original }).commitBatch = async (items) => {
    if (items.some((i) => i.taskId === 999)) {
      await held;
      (committer as unknown as { commitBatch: typeof original }).commitBatch = original;
      return items.map((): SuccessOutcome => 'succeeded');
    }
    return original(items);
  };
  const done = committer.commit(item(999));
  await new Promise((r) => setImmediate(r));
  return { release, done };
}
