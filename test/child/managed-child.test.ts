// The one fork -> SIGTERM -> grace -> SIGKILL helper (src/child/managed-child.ts), with real
// processes: a child that leaves on SIGTERM is not killed, one that ignores SIGTERM (or is
// stopped) is killed after the grace period, and the call resolves only on the confirmed exit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, test } from 'node:test';
import { createEphemeralDatabase } from '../../src/devtools/ephemeral-database.ts';
import { forkManagedChild, isAlive, terminateChild, type ManagedChild } from '../../src/child/managed-child.ts';

const started: ManagedChild[] = [];
after(() => {
  for (const h of started) if (isAlive(h.child)) h.child.kill('SIGKILL');
});

/** A plain node child running `source`; resolves once it printed 'up' (its handlers are installed). */
async function child(source: string): Promise<ManagedChild> {
  const c = spawn(process.execPath, ['-e', `${source}; console.log('up'); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => c.once('exit', (code, signal) => resolve({ code, signal })));
  const h = { child: c, exited };
  started.push(h);
  await new Promise<void>((resolve) => c.stdout!.once('data', () => resolve()));
  return h;
}

test('a child that leaves on SIGTERM is not killed', async () => {
  const h = await child("process.on('SIGTERM', () => process.exit(7))");
  let forced = false;
  assert.equal(
    await terminateChild(h, 10_000, {
      beforeKill: () => {
        forced = true;
      },
    }),
    true,
  );
  assert.equal(forced, false);
  assert.deepEqual(await h.exited, { code: 7, signal: null });
});

test('a child that ignores SIGTERM is killed after the grace period; the call returns after its exit', async () => {
  const h = await child("process.on('SIGTERM', () => {})");
  let forced = false;
  assert.equal(
    await terminateChild(h, 300, {
      beforeKill: () => {
        forced = true;
      },
    }),
    false,
  );
  assert.equal(forced, true);
  assert.equal(isAlive(h.child), false, 'the exit is confirmed when the call returns');
  assert.equal((await h.exited).signal, 'SIGKILL');
});

test('a stopped child (SIGSTOP) is killed after the grace period', async () => {
  const h = await child('');
  h.child.kill('SIGSTOP');
  assert.equal(await terminateChild(h, 300), false);
  assert.equal((await h.exited).signal, 'SIGKILL');
});

test('an already exited child: resolves at once, no signal sent', async () => {
  const h = await child('');
  h.child.kill('SIGKILL');
  await h.exited;
  assert.equal(await terminateChild(h, 10_000, { beforeKill: () => assert.fail('no forced kill') }), true);
});

test('forkManagedChild starts a child entry that reports ready over IPC and leaves on SIGTERM', async () => {
  const db = await createEphemeralDatabase('sqlite', { prefix: 'apsup_fork' });
  try {
    const h = forkManagedChild('worker-main', { ...process.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: db.url });
    started.push(h);
    const r = await Promise.race([
      h.exited,
      new Promise<'ready'>((resolve) =>
        h.child.on('message', (m: { type?: string }) => {
          if (m.type === 'ready') resolve('ready');
        }),
      ),
    ]);
    assert.equal(r, 'ready');
    assert.equal(await terminateChild(h, 10_000, { beforeKill: () => assert.fail('an idle worker leaves on SIGTERM') }), true);
    assert.equal((await h.exited).code, 143);
  } finally {
    await db.drop();
  }
});
