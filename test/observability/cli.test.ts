// The endpoint wired into `apsup run`: a bad POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS
// refuses to start (exit 2, naming the variable); a running host serves /healthz, /readyz and
// /metrics on the address it logs, and stops serving at shutdown.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { P, REPO_ROOT } from '../fixtures/runtime-harness.ts';

const FAMILIES_MODULE = path.join(REPO_ROOT, 'test/fixtures/families/idle.ts');

function spawnCli(args: string[], vars: Record<string, string>) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith(P) && !k.startsWith('NODE_TEST')));
  const child = spawn(process.execPath, ['bin/apsup.mjs', ...args], {
    cwd: REPO_ROOT,
    env: {
      ...base,
      APSUP_LOG_LEVEL: 'info',
      [`${P}FAMILIES_MODULE`]: FAMILIES_MODULE,
      ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [`${P}${k}`, v])),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '', code: null as number | null, exited: false };
  child.stdout.on('data', (d) => {
    out.stdout += String(d);
  });
  child.stderr.on('data', (d) => {
    out.stderr += String(d);
  });
  const exit = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      out.code = code;
      out.exited = true;
      resolve(code);
    }),
  );
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  void exit.then(() => clearTimeout(guard));
  return { child, out, exit };
}

describe('apsup run: observability address', () => {
  test('a bad value exits 2 naming the variable', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-obs-'));
    try {
      const run = spawnCli(['run'], { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`, OBSERVABILITY_ADDRESS: 'localhost' });
      assert.equal(await run.exit, 2, run.out.stderr);
      assert.match(run.out.stderr, /POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS/);
      assert.match(run.out.stdout, /invalid configuration; not starting/);
      assert.deepEqual(fs.readdirSync(dir), [], 'nothing was started');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('[sqlite] apsup run serves the endpoint on the address it logs', () => {
  let fx: BackendFixture;

  before(async () => {
    fx = await createBackend('sqlite');
  });
  after(async () => {
    await fx?.cleanup();
  });

  test('/healthz, /readyz, /metrics while running; closed after SIGTERM', async () => {
    const run = spawnCli(['run'], { DATABASE_URL: fx.url, OBSERVABILITY_ADDRESS: '127.0.0.1:0' });
    try {
      const line = await waitFor(
        () =>
          run.out.stdout
            .split('\n')
            .filter(Boolean)
            .map((l) => {
              try {
                return JSON.parse(l);
              } catch {
                return null;
              }
            })
            .find((l) => l?.msg === 'observability endpoint listening (/metrics, /healthz, /readyz)') ??
          (run.out.exited ? Promise.reject(new Error(`exited: ${run.out.stderr}`)) : null),
        30_000,
      );
      assert.equal(line.address.host, '127.0.0.1');
      const base = `http://127.0.0.1:${line.address.port}`;
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      const ready = await fetch(`${base}/readyz`);
      assert.equal(ready.status, 200);
      const doc = (await ready.json()) as any;
      assert.equal(doc.artifact_processing_supervisor.status, 'ok');
      assert.equal(doc.artifact_processing_supervisor.role, 'all');
      assert.ok(doc.durable_tasks.liveWorkers >= 1, "the host's task runner published its readiness");
      const metrics = await (await fetch(`${base}/metrics`)).text();
      assert.match(metrics, /artifact_processing_budget_available\{family="[^"]+"\} \d+/);
      run.child.kill('SIGTERM');
      assert.equal(await run.exit, 0, run.out.stderr);
      await assert.rejects(fetch(`${base}/healthz`));
    } finally {
      if (!run.out.exited) run.child.kill('SIGKILL');
    }
  });
});
