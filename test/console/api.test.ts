// The console's JSON API on both backends: the seeded facts as the CLI's operations read them,
// the keyset paging of tasks, the actions through the same operations (and their refusals
// without or with a wrong token), ETags, and no password in any answer.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { ConsoleServer } from '../../src/console/server.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';
import { redactDatabaseUrl } from '../../src/config/database-url.ts';
import { FAMILY, TOKEN, api, holdSqliteHost, seed, startConsole, type Seeded } from './harness.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] console API`, () => {
    let fx: BackendFixture;
    let s: Seeded;
    let server: ConsoleServer;
    let release: () => void = () => undefined;

    before(async () => {
      fx = await createBackend(backend);
      release = holdSqliteHost(fx);
      s = await seed(fx);
      server = await startConsole(fx, { token: TOKEN });
    });
    after(async () => {
      await server?.stop();
      release();
      await fx?.cleanup();
    });

    test('overview: the held term, the family backlog and the tasks by state', async () => {
      const { status, body } = await api(server, '/api/overview');
      assert.equal(status, 200);
      const global = body.supervisors.find((x: any) => x.supervisorKey === 'global');
      assert.equal(global.holderId, s.holderId);
      assert.equal(global.supervisorGeneration, s.generation);
      assert.equal(global.live, true);
      const fam = body.families.find((f: any) => f.family === FAMILY);
      assert.equal(fam.owedInvocations, 1);
      assert.equal(fam.ordinaryBacklog, 1);
      assert.equal(fam.schedule, 'every 300s');
      assert.equal(body.tasks.pending, 1);
      assert.equal(body.tasks.claimCap, 4);
      assert.equal(body.tasks.claimsRunning, 0);
      assert.deepEqual(
        body.tasks.recentFailures.map((f: any) => [f.taskId, f.errorMessage]),
        [[s.failedTaskId, 'index build failed: disk full']],
      );
      assert.equal(body.schema.checked, true);
      assert.equal(body.schema.drift, false);
      assert.deepEqual(
        body.termHistory.map((c: any) => [c.supervisorKey, c.kind, c.toHolderId]),
        [['global', 'first_seen', s.holderId]],
      );
      assert.equal(body.database, redactDatabaseUrl(fx.target));
    });

    test('a takeover between two reads is recorded in the term history', async () => {
      await fx.store.invalidateTerm('global', { holderId: s.holderId, supervisorGeneration: s.generation });
      const taken = await fx.store.acquireTerm('global', 'host-console-b', 600_000);
      const { body } = await api(server, '/api/leases');
      assert.equal(body.supervisors.find((x: any) => x.supervisorKey === 'global').holderId, 'host-console-b');
      // The invalidation in between was not read: one change, from the old holder to the new one.
      assert.equal(body.termHistory[0].kind, 'takeover');
      assert.equal(body.termHistory[0].toGeneration, taken.supervisorGeneration);
      assert.equal(body.termHistory[0].fromHolderId, s.holderId);
      s = { ...s, holderId: 'host-console-b', generation: taken.supervisorGeneration };
    });

    test('family page: scan checkpoint and owed keys with their generations; scope intent', async () => {
      const { status, body } = await api(server, `/api/families/${FAMILY}`);
      assert.equal(status, 200);
      assert.equal(body.binding, s.binding);
      assert.equal(body.scan.scanInProgress, false);
      assert.deepEqual(
        body.owed.keys.map((k: any) => [k.scopeId, k.requestedGeneration, k.handledGeneration]),
        [['scope-owed', 2, 0]],
      );
      assert.deepEqual(
        body.dirty.keys.map((k: any) => [k.scopeId, k.dirtyGeneration, k.cleanGeneration]),
        [['scope-dirty', 1, 0]],
      );
      assert.equal(body.dirty.nextAfterSequence, null);
      assert.equal(body.live, false);
      const scope = await api(server, `/api/families/${FAMILY}/scopes/scope-dirty`);
      assert.equal(scope.body.intent.dirtyGeneration, 1);
      assert.equal(scope.body.intent.dirty, true);
      assert.equal((await api(server, '/api/families/no-such')).status, 404);
      assert.equal((await api(server, `/api/families/${FAMILY}?limit=0`)).status, 400);
    });

    test('tasks: list by state, type and keyset paging; detail with the error', async () => {
      const failed = await api(server, '/api/tasks?state=failed');
      assert.deepEqual(
        failed.body.tasks.map((t: any) => t.taskId),
        [s.failedTaskId],
      );
      const page1 = await api(server, '/api/tasks?limit=1');
      assert.equal(page1.body.tasks[0].taskId, s.pendingTaskId);
      assert.equal(page1.body.nextBeforeTaskId, s.pendingTaskId);
      const page2 = await api(server, `/api/tasks?limit=1&before=${page1.body.nextBeforeTaskId}`);
      assert.deepEqual(
        page2.body.tasks.map((t: any) => t.taskId),
        [s.failedTaskId],
      );
      const byType1 = await api(server, '/api/tasks?type=fx-sleep&limit=1');
      assert.deepEqual(
        byType1.body.tasks.map((t: any) => t.taskId),
        [s.pendingTaskId],
      );
      const byType2 = await api(server, `/api/tasks?type=fx-sleep&limit=1&before=${byType1.body.nextBeforeTaskId}`);
      assert.deepEqual(
        byType2.body.tasks.map((t: any) => t.taskId),
        [s.failedTaskId],
      );
      assert.equal(byType2.body.nextBeforeTaskId, null, 'the last row read: no further page');
      const past = await api(server, `/api/tasks?since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`);
      assert.equal(past.body.tasks.length, 2);
      const typed = await api(server, '/api/tasks?type=fx-hang');
      assert.deepEqual(typed.body.tasks, []);
      const future = await api(server, `/api/tasks?since=${encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString())}`);
      assert.deepEqual(future.body.tasks, []);
      assert.equal((await api(server, '/api/tasks?state=bogus')).status, 400);
      const detail = await api(server, `/api/tasks/${s.failedTaskId}`);
      assert.equal(detail.body.errorCode, 'handler_error');
      assert.equal(detail.body.errorMessage, 'index build failed: disk full');
      assert.equal((await api(server, '/api/tasks/999999')).status, 404);
    });

    test('reads under a non-loopback Host (DNS rebinding) need the token', async () => {
      const get = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = http.request(`${server.url}/api/overview`, { headers }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on('error', reject);
          req.end();
        });
      assert.equal(await get({ host: 'attacker.example:9465' }), 401);
      assert.equal(await get({ host: 'attacker.example:9465', authorization: `Bearer ${TOKEN}x` }), 403);
      assert.equal(await get({ host: 'attacker.example:9465', authorization: `Bearer ${TOKEN}` }), 200);
      assert.equal(await get({ host: `localhost:${server.address.port}` }), 200);
    });

    test('ETag: an unchanged answer is 304', async () => {
      const first = await api(server, `/api/tasks/${s.failedTaskId}`);
      const etag = first.headers.get('etag')!;
      assert.ok(etag);
      const again = await api(server, `/api/tasks/${s.failedTaskId}`, { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304);
    });

    test('actions are refused without the token (401) and with a wrong one (403); nothing is written', async () => {
      const none = await api(server, `/api/tasks/${s.pendingTaskId}/cancel`, { method: 'POST' });
      assert.equal(none.status, 401);
      assert.match(none.headers.get('www-authenticate') ?? '', /Bearer/);
      const wrong = await api(server, `/api/tasks/${s.pendingTaskId}/cancel`, { method: 'POST', token: `${TOKEN}x` });
      assert.equal(wrong.status, 403);
      const trigger = await api(server, `/api/families/${FAMILY}/scopes/new-scope/trigger`, { method: 'POST', token: 'nope' });
      assert.equal(trigger.status, 403);
      assert.equal((await api(server, `/api/tasks/${s.pendingTaskId}`)).body.state, 'pending');
      assert.equal(await fx.store.readIntent(s.binding, 'new-scope'), null);
    });

    test('actions with the token: trigger, mark dirty, maintenance, capacity, cancel, delete', async () => {
      const trigger = await api(server, `/api/families/${FAMILY}/scopes/new-scope/trigger`, { method: 'POST', token: TOKEN });
      assert.equal(trigger.status, 200, JSON.stringify(trigger.body));
      assert.equal((await fx.store.readIntent(s.binding, 'new-scope'))?.requestedGeneration, 1);
      const dirty = await api(server, `/api/families/${FAMILY}/scopes/new-scope/mark-dirty`, { method: 'POST', token: TOKEN });
      assert.equal(dirty.body.dirtyGeneration, 1);

      const on = await api(server, '/api/maintenance', { method: 'POST', token: TOKEN, body: JSON.stringify({ on: true }) });
      assert.equal(on.body.maintenance, true);
      const refused = await api(server, `/api/families/${FAMILY}/scopes/new-scope/trigger`, { method: 'POST', token: TOKEN });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, 'maintenance');
      assert.equal((await fx.store.readIntent(s.binding, 'new-scope'))?.requestedGeneration, 1, 'nothing written during maintenance');
      const off = await api(server, '/api/maintenance', { method: 'POST', token: TOKEN, body: JSON.stringify({ on: false }) });
      assert.equal(off.body.maintenance, false);

      const cap = await api(server, '/api/tasks/capacity', { method: 'POST', token: TOKEN, body: JSON.stringify({ capacity: 7 }) });
      assert.equal(cap.body.capacity, 7);
      assert.equal((await api(server, '/api/tasks/capacity', { method: 'POST', token: TOKEN, body: JSON.stringify({ capacity: 0 }) })).status, 400);

      const cancel = await api(server, `/api/tasks/${s.pendingTaskId}/cancel`, { method: 'POST', token: TOKEN });
      assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
      assert.equal(cancel.body.outcome, 'cancelled');
      assert.equal((await api(server, `/api/tasks/${s.pendingTaskId}`)).body.state, 'cancelled');
      const del = await api(server, `/api/tasks/${s.pendingTaskId}/delete`, { method: 'POST', token: TOKEN });
      assert.equal(del.body.deleted, true);
      assert.equal((await api(server, `/api/tasks/${s.pendingTaskId}`)).status, 404);
      const gone = await api(server, `/api/tasks/${s.pendingTaskId}/delete`, { method: 'POST', token: TOKEN });
      assert.equal(gone.status, 404);
    });

    if (backend === 'mysql') {
      test('a database password never reaches an answer', async () => {
        const password = 'pw-S3cret-console';
        const t = fx.target as Extract<typeof fx.target, { backend: 'mysql' }>;
        await fx.query(`CREATE USER IF NOT EXISTS 'apsup_console_pw'@'%' IDENTIFIED BY '${password}'`);
        await fx.query(`GRANT ALL ON \`${t.database}\`.* TO 'apsup_console_pw'@'%'`);
        const withPassword = await startConsole(fx, { databaseUrl: `mysql://apsup_console_pw:${password}@${t.host}:${t.port}/${t.database}` });
        try {
          const texts = await Promise.all(
            ['/api/overview', '/api/leases', `/api/families/${FAMILY}`, '/api/tasks'].map(async (r) => JSON.stringify((await api(withPassword, r)).body)),
          );
          for (const text of texts) assert.ok(!text.includes(password), text.slice(0, 300));
          assert.match(texts[0]!, /apsup_console_pw:\*\*\*@/);
        } finally {
          await withPassword.stop();
          await fx.query(`DROP USER IF EXISTS 'apsup_console_pw'@'%'`);
        }
      });
    }

    test('security headers: CSP without inline script, no framing', async () => {
      const res = await fetch(`${server.url}/`);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      const html = await res.text();
      assert.doesNotMatch(html, /<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script in the page');
      assert.equal((await fetch(`${server.url}/static/..%2fauth.ts`)).status, 404);
    });
  });
}
