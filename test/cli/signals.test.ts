// Shutdown signals of real processes (RFC 9 shutdown):
//  - one Ctrl-C on `npm start` (SIGINT to its process group, which npm relays once more) is a
//    clean shutdown: exit 0, nothing forced, no process left;
//  - a second SIGINT while the clean shutdown waits (here for a worker that ignores SIGTERM and
//    its host's disconnect, with a long grace period) forces the exit, but the worker processes
//    are killed, the term is invalidated and the SQLite host lock released first, and the
//    forcing is logged;
//  - SIGTERM sent to `npm start` reaches the runtime (no orphan holding the term and the lock).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { after, test } from 'node:test';
import { createEphemeralDatabase } from '../../src/devtools/ephemeral-database.ts';
import type { BackendFixture } from '../helpers/backends.ts';
import { isAlive } from '../../src/devtools/processes.ts';
import { FAST_TUNING, createFixtureTables, setBehaviour } from '../fixtures/runtime-harness.ts';
import { IDLE_FAMILIES, ROOT, childEnv, descendantPids, removeTempDirs, runCli, spawnCli, tempDir, waitFor } from './helpers.ts';

const pids: number[] = [];
after(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  removeTempDirs();
});

/** The SQLite lease of the global supervisor, read on a connection of its own. */
function globalLease(file: string): { holder_id: string | null; supervisor_generation: number } {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT holder_id, supervisor_generation FROM pc_artifact_processing_leases WHERE supervisor_key = 'global'").get() as {
      holder_id: string | null;
      supervisor_generation: number;
    };
  } finally {
    db.close();
  }
}

const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return null;
      }
    })
    .filter((l) => l !== null);

test('a second SIGINT during shutdown forces the exit: workers killed, term invalidated, host lock released', async () => {
  const db = await createEphemeralDatabase('sqlite', { prefix: 'apsup-cli-sig' });
  const file = (db.target as { file: string }).file;
  const sqlite = new Database(file);
  const fx = {
    backend: 'sqlite',
    async query(sql: string, params: unknown[] = []) {
      const stmt = sqlite.prepare(sql);
      return stmt.reader ? stmt.all(...params) : (stmt.run(...params), []);
    },
  } as unknown as BackendFixture;
  try {
    await createFixtureTables(fx);
    // Ignores SIGTERM: the clean shutdown waits the whole grace period (60 s) for it; ignores its
    // host's disconnect: only a SIGKILL ends it.
    await setBehaviour(fx, 'fx-manual', '*', 'deaf');
    const tuning = Object.fromEntries(Object.entries(FAST_TUNING).map(([k, v]) => [k.replace(/^POWERCONTEXT_SERVER_RUNTIME_/, ''), v]));
    const vars = {
      ...tuning,
      DATABASE_URL: db.url,
      FAMILIES_MODULE: IDLE_FAMILIES,
      OBSERVABILITY_ADDRESS: 'off',
      ARTIFACT_PROCESSING_TERMINATE_GRACE_SECONDS: '60',
    };
    const run = spawnCli(['run'], vars, { APSUP_LOG_LEVEL: 'info' });
    pids.push(run.child.pid!);
    // 'exit', not 'close': a worker left behind would keep the inherited pipes open.
    const exited = new Promise<number | null>((resolve) => run.child.once('exit', (code) => resolve(code)));
    await waitFor(() => lines(run.out.stdout).some((l) => l.msg === 'supervisor started'), 60_000, `supervisor started: ${run.out.stderr}`);
    const trigger = await runCli(['trigger', 'fx-manual', 's1'], vars);
    assert.equal(trigger.code, 0, trigger.stderr);
    const worker = await waitFor(
      () => (sqlite.prepare("SELECT pid FROM fx_runs WHERE family = 'fx-manual'").get() as { pid: number } | undefined)?.pid,
      60_000,
      'the stubborn invocation',
    );
    pids.push(worker);
    const before = globalLease(file);
    assert.notEqual(before.holder_id, null, 'the runtime holds the term');
    assert.ok(fs.existsSync(`${file}.host.lock`));

    run.child.kill('SIGINT');
    await waitFor(() => lines(run.out.stdout).some((l) => l.msg === 'shutting down: discovery and dispatch stopped'), 30_000, 'the clean shutdown');
    // The stubborn worker noticed the shutdown's SIGTERM (it records that, then stays alive): the
    // clean shutdown is now in its 60 s grace period, the term still held.
    await waitFor(
      () => (sqlite.prepare("SELECT outcome FROM fx_runs WHERE family = 'fx-manual'").get() as { outcome: string | null } | undefined)?.outcome === 'threw',
      30_000,
      'the worker noticed SIGTERM',
    );
    // A signal right after the first is the same keypress; from this line on one forces.
    await waitFor(() => lines(run.out.stdout).some((l) => String(l.msg).includes('a further signal now forces')), 30_000, 'the repeat window to end');
    assert.equal(run.child.exitCode, null, 'still shutting down when the second signal arrives');
    assert.equal(globalLease(file).holder_id, before.holder_id, 'the clean shutdown has not ended the term yet');
    const children = descendantPids(run.child.pid!);
    assert.ok(children.includes(worker), 'the stubborn worker is a child of the runtime');
    pids.push(...children);
    run.child.kill('SIGINT');
    assert.equal(await exited, 130, `forced exit code (stderr ${run.out.stderr})`);
    assert.deepEqual(
      children.filter((pid) => isAlive(pid)),
      [],
      'no worker process outlives the forced exit',
    );
    const exit = await run.result;
    assert.ok(
      lines(exit.stdout).some((l) => String(l.msg).includes('forcing')),
      'the forcing is logged',
    );
    const after = globalLease(file);
    assert.equal(after.holder_id, null, 'the term was invalidated');
    assert.ok(after.supervisor_generation > before.supervisor_generation);
    assert.ok(!fs.existsSync(`${file}.host.lock`), 'the host lock was released');
  } finally {
    sqlite.close();
    await db.drop();
  }
});

test('SIGTERM to `npm start` stops the runtime: no orphan, term invalidated, host lock released', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'db.sqlite');
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: childEnv({ DATABASE_URL: `sqlite:${file}`, OBSERVABILITY_ADDRESS: 'off' }, { APSUP_LOG_FORMAT: 'json' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  pids.push(npm.pid!);
  let stdout = '';
  let stderr = '';
  npm.stdout.on('data', (d) => {
    stdout += String(d);
  });
  npm.stderr.on('data', (d) => {
    stderr += String(d);
  });
  // 'exit', not 'close': an orphaned runtime would keep the pipes open.
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
  await waitFor(() => lines(stdout).some((l) => l.msg === 'supervisor started'), 90_000, `npm start: ${stderr}`);
  const runtimePid = Number(fs.readFileSync(`${file}.host.lock`, 'utf8').trim());
  pids.push(runtimePid);
  assert.ok(isAlive(runtimePid));
  assert.notEqual(globalLease(file).holder_id, null);
  npm.kill('SIGTERM');
  await exited;
  await waitFor(() => !isAlive(runtimePid), 30_000, `runtime ${runtimePid} to exit`);
  assert.ok(
    lines(stdout).some((l) => l.msg === 'shut down'),
    'the runtime ran its clean shutdown',
  );
  assert.equal(globalLease(file).holder_id, null, 'the term was invalidated');
  assert.ok(!fs.existsSync(`${file}.host.lock`), 'the host lock was released');
});

test('one Ctrl-C on `npm start` (SIGINT to its process group, relayed by npm) is a clean shutdown', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'db.sqlite');
  // Its own process group, as a terminal's foreground job: the signal reaches npm, the runtime
  // and the workers at once, and npm relays a copy to the runtime.
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: childEnv({ DATABASE_URL: `sqlite:${file}`, OBSERVABILITY_ADDRESS: 'off' }, { APSUP_LOG_FORMAT: 'json' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  pids.push(npm.pid!);
  let stdout = '';
  let stderr = '';
  npm.stdout.on('data', (d) => {
    stdout += String(d);
  });
  npm.stderr.on('data', (d) => {
    stderr += String(d);
  });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  // Work under way: workers have committed and the demo driver runs (the shutdown has workers to stop).
  await waitFor(() => lines(stdout).some((l) => l.msg === 'scope invocation acknowledged'), 90_000, `npm start: ${stderr}`);
  await waitFor(() => lines(stdout).some((l) => String(l.msg).startsWith('demo: new source appended')), 90_000, `demo driver: ${stderr}`);
  const runtimePid = Number(fs.readFileSync(`${file}.host.lock`, 'utf8').trim());
  const group = descendantPids(npm.pid!);
  pids.push(...group);
  assert.ok(group.includes(runtimePid));
  process.kill(-npm.pid!, 'SIGINT');
  const code = await exited;
  await waitFor(() => !isAlive(runtimePid), 30_000, `runtime ${runtimePid} to exit`);
  assert.equal(code, 0, `npm start exit code (stderr ${stderr})`);
  assert.ok(!`${stdout}${stderr}`.includes('forcing'), 'one keypress never forces');
  assert.ok(
    lines(stdout).some((l) => l.msg === 'shut down'),
    'the runtime ran its clean shutdown',
  );
  assert.deepEqual(
    group.filter((pid) => isAlive(pid)),
    [],
    'no process of the job is left',
  );
  assert.equal(globalLease(file).holder_id, null, 'the term was invalidated');
});
