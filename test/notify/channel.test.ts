// The wake-up channel against the local Redis (127.0.0.1:6379): messages reach another
// channel's subscribers; per-database namespaces; Redis down at start (start does not fail,
// status down, publishing never throws); Redis dying mid-run through a proxy this test owns
// (status down, publish failures counted, reconnect, then one catch-up call with no id and
// messages flow again). The shared Redis server is never stopped.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { NotifyChannel, notifyNamespace, type NotifyTopic } from '../../src/notify/channel.ts';
import { parseNotifyConfig } from '../../src/notify/config.ts';
import { waitFor } from '../helpers/backends.ts';
import { TcpProxy, freePort } from './tcp-proxy.ts';

const logger = createLogger({ level: 'silent' });
const target = { backend: 'mysql' as const, host: '127.0.0.1', port: 3306, user: 'root', password: '', database: `notify_${process.pid}_${Date.now()}` };
const ns = notifyNamespace(target);

function channel(port: number, namespace = ns, options: { subscribe?: boolean } = {}) {
  return new NotifyChannel(parseNotifyConfig({ POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL: `redis://127.0.0.1:${port}/0` })!, namespace, logger, options);
}

function collect(c: NotifyChannel, topic: NotifyTopic): Array<string | null> {
  const got: Array<string | null> = [];
  c.on(topic, (p) => got.push(p));
  return got;
}

describe('wake-up channel over Redis pub/sub', () => {
  const open: NotifyChannel[] = [];
  const make = (...args: Parameters<typeof channel>) => {
    const c = channel(...args);
    open.push(c);
    return c;
  };
  after(async () => {
    for (const c of open) await c.close();
  });

  test('a message published by one channel reaches the subscribers of another; other namespaces hear nothing', async () => {
    const subscriber = make(6379);
    const stranger = make(6379, notifyNamespace({ ...target, database: `${target.database}_other` }));
    const publisher = make(6379, ns, { subscribe: false });
    await Promise.all([subscriber.start(), stranger.start(), publisher.start()]);
    const requests = collect(subscriber, 'request');
    const tasks = collect(subscriber, 'task');
    const foreign = collect(stranger, 'request');
    publisher.publish('request', 'fo-alpha\t42');
    publisher.publish('task', '7');
    await waitFor(() => requests.length === 1 && tasks.length === 1, 5000);
    assert.deepEqual(requests, ['fo-alpha\t42']);
    assert.deepEqual(tasks, ['7']);
    assert.equal(await publisher.publishAndFlush('request', 'fo-beta\t1'), true);
    await waitFor(() => requests.length === 2, 5000);
    assert.deepEqual(foreign, []);
    assert.equal(subscriber.status().status, 'up');
  });

  test('Redis down at start: start resolves, status down, publishing never throws and is counted', async () => {
    const port = await freePort();
    const c = make(port);
    await c.start();
    const s = c.status();
    assert.equal(s.status, 'down');
    assert.ok(s.lastError, 'the error is reported');
    assert.doesNotThrow(() => c.publish('task', '1'));
    await waitFor(() => c.status().publishFailures >= 1, 5000);
    assert.equal(await c.publishAndFlush('task', '2'), false);
  });

  test('Redis dies mid-run (proxy cut): down, publishes fail quietly; back: catch-up call, messages flow again', async () => {
    const proxy = new TcpProxy();
    const port = await proxy.start();
    const subscriber = make(port);
    const publisher = make(port, ns, { subscribe: false });
    await Promise.all([subscriber.start(), publisher.start()]);
    const got = collect(subscriber, 'dirty');
    publisher.publish('dirty', 'before');
    await waitFor(() => got.includes('before'), 5000);

    await proxy.cut();
    await waitFor(() => subscriber.status().status === 'down' && publisher.status().status === 'down', 10_000);
    const failures = publisher.status().publishFailures;
    assert.doesNotThrow(() => publisher.publish('dirty', 'lost'));
    await waitFor(() => publisher.status().publishFailures > failures, 5000);

    await proxy.restore();
    await waitFor(() => subscriber.status().status === 'up' && publisher.status().status === 'up', 15_000);
    await waitFor(() => got.includes(null), 5000); // the catch-up after the reconnect
    assert.ok(subscriber.status().reconnects >= 1);
    publisher.publish('dirty', 'after');
    await waitFor(() => got.includes('after'), 5000);
    assert.ok(!got.includes('lost'), 'a message published during the outage is dropped, not queued');
    await proxy.cut();
  });
});
