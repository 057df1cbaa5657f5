// Cross-process wake-up on MariaDB (issue 12 item 6), with real `apsup run --role background`
// hosts and the local Redis:
// - with the channel, a request accepted and a task submitted by another process start long
//   before the next poll could find them (poll 60 s, probe 60 s, sweep 60 s here), and the
//   host's readiness counts the messages it received;
// - Redis down at start: the host starts, readiness shows the channel down (still ready), and
//   the work completes by polling;
// - a lost message (an intent committed, nothing published) completes by polling;
// - Redis dying mid-run (a proxy this test owns is cut; the shared server keeps running):
//   readiness shows it, work completes by polling, and after Redis is back messages are
//   received again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { NotifyChannel, notifyNamespace } from '../../src/notify/channel.ts';
import { parseNotifyConfig } from '../../src/notify/config.ts';
import { publishOnce } from '../../src/notify/start.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { loadHostTaskRegistry } from '../../src/child/host-import.ts';
import { TaskService } from '../../src/tasks/service.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { ALPHA_BINDING } from '../fixtures/failover/families.ts';
import { RuntimeProcess, killEverything, makeFixtureDir } from '../fixtures/failover/harness.ts';
import { EFFECTS_DDL } from '../fixtures/failover/protocol.ts';
import { FIXTURE_TASKS_MODULE } from '../tasks/harness.ts';
import { TcpProxy, freePort } from './tcp-proxy.ts';

const logger = createLogger({ level: 'silent' });
const P = 'POWERCONTEXT_SERVER_RUNTIME_';

describe('cross-process wake-up over Redis (MariaDB, real hosts)', () => {
  let fx: BackendFixture;
  let dir: string;
  let tasks: TaskStore;
  const proxy = new TcpProxy();

  before(async () => {
    fx = await createBackend('mysql');
    await fx.query(EFFECTS_DDL);
    dir = makeFixtureDir('notify');
    tasks = new TaskStore(fx.store as BaseStore);
  });
  after(async () => {
    killEverything();
    await proxy.cut();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function host(name: string, redisUrl: string, pollSeconds: string): Promise<{ proc: RuntimeProcess; readyz: () => Promise<any> }> {
    const port = await freePort();
    const proc = new RuntimeProcess(name, {
      url: fx.url,
      fixtureDir: dir,
      role: 'background',
      env: {
        [`${P}ARTIFACT_PROCESSING_POLL_SECONDS`]: pollSeconds,
        [`${P}NOTIFY_REDIS_URL`]: redisUrl,
        [`${P}TASKS_MODULE`]: FIXTURE_TASKS_MODULE,
        [`${P}DURABLE_TASK_WAKEUP_POLL_MS`]: String(Math.round(Number(pollSeconds) * 1000)),
        [`${P}DURABLE_TASK_SWEEP_SECONDS`]: pollSeconds,
        [`${P}OBSERVABILITY_ADDRESS`]: `127.0.0.1:${port}`,
      },
    });
    await proc.waitForMsg('wake-up channel started', {}, 30_000);
    await proc.waitForMsg('term acquired; recovering from persisted state', {}, 30_000);
    const readyz = async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).json();
    await waitFor(async () => (await readyz().catch(() => null)) !== null, 10_000);
    return { proc, readyz };
  }

  const env = (url: string) => ({ [`${P}NOTIFY_REDIS_URL`]: url });
  async function trigger(scope: string, publishTo: string | null): Promise<void> {
    const intent = await fx.store.acceptRequest(ALPHA_BINDING, scope);
    if (publishTo) await publishOnce(env(publishTo), fx.target, logger, 'request', `fo-alpha\t${intent.pendingSequence}`);
  }
  async function handled(scope: string, timeoutMs: number): Promise<void> {
    await waitFor(async () => {
      const i = await fx.store.readIntent(ALPHA_BINDING, scope);
      return i !== null && i.handledGeneration === i.requestedGeneration;
    }, timeoutMs);
  }

  test('with the channel: a trigger and a task from another process start without waiting for the 60 s poll', async () => {
    const { proc, readyz } = await host('fast', 'redis://127.0.0.1:6379/0', '60');
    try {
      await trigger('fast-1', 'redis://127.0.0.1:6379/0');
      await handled('fast-1', 20_000);
      // A task submitted through TaskService with the channel as its notifier.
      const publisher = new NotifyChannel(parseNotifyConfig(env('redis://127.0.0.1:6379/0'))!, notifyNamespace(fx.target), logger, { subscribe: false });
      await publisher.start();
      const service = new TaskService(tasks, await loadHostTaskRegistry(FIXTURE_TASKS_MODULE), { maxTimeoutMs: 60_000, defaultTimeoutMs: 30_000 });
      service.notifier = publisher;
      const submitted = await service.submit({ taskType: 'fx-quick', payload: {} });
      await waitFor(async () => (await tasks.read(submitted.taskId))?.state === 'succeeded', 20_000);
      await publisher.close();
      const doc = await readyz();
      assert.equal(doc.notify.status, 'up');
      assert.ok(doc.notify.received >= 2, JSON.stringify(doc.notify));
      assert.doesNotMatch(JSON.stringify(doc.notify), /@/, 'no credentials in readiness');
    } finally {
      await proc.stop();
    }
  });

  test('Redis down at start: the host starts, readiness shows it, work completes by polling', async () => {
    const dead = `redis://127.0.0.1:${await freePort()}/0`;
    const { proc, readyz } = await host('down', dead, '1');
    try {
      const doc = await readyz();
      assert.equal(doc.ready, true, 'a channel outage never makes the host unready');
      assert.equal(doc.notify.status, 'down');
      await trigger('down-1', dead);
      await handled('down-1', 20_000);
      const submitted = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 1, payload: {}, timeoutMs: 30_000 });
      await waitFor(async () => (await tasks.read(submitted.taskId))?.state === 'succeeded', 20_000);
    } finally {
      await proc.stop();
    }
  });

  test('a lost message and Redis dying mid-run only delay work to the poll; after Redis is back messages arrive again', async () => {
    const port = await proxy.start();
    const viaProxy = `redis://127.0.0.1:${port}/0`;
    const { proc, readyz } = await host('cut', viaProxy, '1');
    try {
      const received = async () => (await readyz()).notify.received as number;
      // Lost message: committed, never published.
      const before = await received();
      await trigger('lost-1', null);
      await handled('lost-1', 20_000);
      assert.equal(await received(), before);

      await proxy.cut();
      await waitFor(async () => (await readyz()).notify.status === 'down', 15_000);
      assert.equal((await readyz()).ready, true);
      await trigger('cut-1', viaProxy); // the publish fails: nothing reaches the host
      await handled('cut-1', 20_000);

      await proxy.restore();
      await waitFor(async () => (await readyz()).notify.status === 'up', 20_000);
      const n = await received();
      await trigger('back-1', viaProxy);
      await handled('back-1', 20_000);
      await waitFor(async () => (await received()) > n, 10_000);
    } finally {
      await proc.stop();
      await proxy.cut();
    }
  });
});
