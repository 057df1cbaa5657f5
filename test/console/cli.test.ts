// `apsup console` and the console mounted by `apsup run` (POWERCONTEXT_SERVER_RUNTIME_CONSOLE_ADDRESS),
// as real processes of the documented entry point on a migrated SQLite file; the settings'
// refusals (one line, exit 2, never the token's value).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createBackend, type BackendFixture } from '../helpers/backends.ts';
import { IDLE_FAMILIES, runCli, spawnCli, waitFor } from '../cli/helpers.ts';

const lines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>);

describe('[sqlite] apsup console', () => {
  let fx: BackendFixture;
  before(async () => {
    fx = await createBackend('sqlite');
  });
  after(async () => {
    await fx?.cleanup();
  });
  const vars = () => ({ DATABASE_URL: fx.url, FAMILIES_MODULE: IDLE_FAMILIES, OBSERVABILITY_ADDRESS: 'off' });

  test('serves the page and the API until SIGTERM', async () => {
    const c = spawnCli(['console', '--listen', '127.0.0.1:0'], vars());
    try {
      const url = await waitFor(() => /apsup console: (http:\/\/\S+)\//.exec(c.out.stdout)?.[1], 60_000, `the console URL: ${c.out.stderr}`);
      const overview = await (await fetch(`${url}/api/overview`)).json();
      assert.deepEqual(
        overview.families.map((f: { family: string }) => f.family),
        ['fx-idle', 'fx-manual'],
      );
      assert.match(await (await fetch(`${url}/`)).text(), /<aps-console>/);
      const refused = await fetch(`${url}/api/maintenance`, { method: 'POST', body: '{"on":true}' });
      assert.equal(refused.status, 401, 'no token configured: actions refused');
    } finally {
      c.child.kill('SIGTERM');
    }
    assert.equal((await c.result).code, 0, c.out.stderr);
  });

  test('bad --listen and a short token are refused in one line naming them; the token is not echoed', async () => {
    const listen = await runCli(['console', '--listen', 'nowhere'], vars());
    assert.equal(listen.code, 2);
    assert.match(listen.stderr, /--listen must be host:port/);
    const token = await runCli(['console'], { ...vars(), CONSOLE_TOKEN: 'short-secret' });
    assert.equal(token.code, 2);
    assert.match(token.stderr, /POWERCONTEXT_SERVER_RUNTIME_CONSOLE_TOKEN must be 16\.\.512 characters/);
    assert.doesNotMatch(token.stderr, /short-secret/);
    const address = await runCli(['console'], { ...vars(), CONSOLE_ADDRESS: 'x:99999' });
    assert.equal(address.code, 2);
    assert.match(address.stderr, /POWERCONTEXT_SERVER_RUNTIME_CONSOLE_ADDRESS port must be 0\.\.65535/);
  });

  test('apsup run mounts the console with the live view', async () => {
    const token = 'mounted-console-token-0123';
    const run = spawnCli(['run'], { ...vars(), CONSOLE_ADDRESS: '127.0.0.1:0', CONSOLE_TOKEN: token }, { APSUP_LOG_LEVEL: 'info' });
    try {
      const address = await waitFor(
        () => lines(run.out.stdout).find((l) => l.msg === 'web console listening')?.address,
        60_000,
        `the console log line: ${run.out.stderr}`,
      );
      const url = `http://127.0.0.1:${address.port}`;
      const overview = await (await fetch(`${url}/api/overview`)).json();
      assert.equal(overview.host.role, 'all');
      assert.ok(!run.out.stdout.includes(token), 'the token is never logged');
      const trigger = await fetch(`${url}/api/families/fx-idle/scopes/s1/trigger`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
      assert.equal(trigger.status, 200);
    } finally {
      run.child.kill('SIGTERM');
    }
    assert.equal((await run.result).code, 0, run.out.stderr);
  });
});
