// A worker process whose host dies leaves with it, also when the host died while the worker was
// still loading its code (before it listened for the channel's close): a task worker on MySQL
// kept its connection and lived on, orphaned, holding the test's stdio pipes (seen with
// on-demand task workers and a SIGKILLed `apsup tasks worker`). The parent here forks the
// compiled entry and SIGKILLs itself at once, as a host killed mid-start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, test } from 'node:test';
import { childEntry, type ChildEntryName } from '../../src/child/entry.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { isAlive } from '../../src/devtools/processes.ts';

const orphans: number[] = [];
const fixtures: BackendFixture[] = [];
after(async () => {
  for (const pid of orphans) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const fx of fixtures) await fx.cleanup();
});

const PARENT = `
const { fork } = require('node:child_process');
const [entry, url] = process.argv.slice(1);
const child = fork(entry, [], { env: { ...process.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: url }, stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'json' });
process.stdout.write(String(child.pid) + '\\n', () => process.kill(process.pid, 'SIGKILL'));
`;

/** Forks `name` from a parent that dies at once; the orphan's pid. */
async function orphanOf(name: ChildEntryName, url: string): Promise<number> {
  const entry = childEntry(name);
  assert.equal(entry.precompiled, true, 'the compiled entry (what hosts fork)');
  const parent = spawn(process.execPath, ['-e', PARENT, entry.modulePath, url], {
    env: { ...process.env, ...entry.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  parent.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  await new Promise((resolve) => parent.once('exit', resolve));
  const pid = Number(out.trim());
  assert.ok(Number.isInteger(pid) && pid > 0, `the parent printed the child's pid (${JSON.stringify(out)})`);
  orphans.push(pid);
  return pid;
}

for (const backend of ['mysql', 'sqlite'] as const) {
  for (const name of ['task-worker-main', 'worker-main'] as const) {
    test(`${name} (${backend}) exits when its parent was killed while it started`, async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const pids = await Promise.all([0, 1, 2].map(() => orphanOf(name, fx.url)));
      for (const pid of pids) {
        await waitFor(() => !isAlive(pid), 15_000).catch(() => {
          throw new Error(`${name} ${pid} outlived its parent by 15 s`);
        });
      }
    });
  }
}
