// Issue 44 "Done when", in the system Chromium on a seeded database with a running host (the
// console mounted as `apsup run` mounts it): the page shows the family, its failing scope with
// its backoff, the held term and the failed task with its error; cancelling the pending task is
// refused without the operator token and with a wrong one, and done with it. Takes the README
// screenshot (APSUP_UPDATE_SCREENSHOT=1 writes docs/console.png; otherwise a temporary file).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ConsoleServer } from '../../src/console/server.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { parseTaskConfig } from '../../src/tasks/config.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { ROOT } from '../cli/helpers.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { P, createFixtureTables, setBehaviour, startRuntime } from '../fixtures/runtime-harness.ts';
import { launchBrowser } from './browser.ts';
import { FAMILY, TASKS_MODULE, TOKEN, holdSqliteHost, registrations, seed, type Seeded } from './harness.ts';

describe('[sqlite] console in the browser', () => {
  let fx: BackendFixture;
  let s: Seeded;
  let server: ConsoleServer;
  let runtime: Runtime;
  let release: () => void;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const tasks = () => new TaskStore(fx.store as BaseStore);

  before(async () => {
    fx = await createBackend('sqlite');
    await createFixtureTables(fx);
    s = await seed(fx, { term: false });
    // A little more of a real day for the screenshot: other task types and states.
    const t = tasks();
    for (const [type, payload] of [
      ['fx-idempotent', { ms: 1 }],
      ['fx-finalize', { ms: 2 }],
    ] as const) {
      const done = await t.submit({ taskType: type, handlerVersion: 1, payload, timeoutMs: 60_000 });
      const claimed = (await t.claim('console-worker', 60_000, [type]))!;
      await t.succeed(done.taskId, claimed.attemptToken, { indexed: 128 });
    }
    await t.submit({ taskType: 'fx-busy', handlerVersion: 1, payload: { ms: 3 }, timeoutMs: 60_000 });
    await t.claim('console-worker', 60_000, ['fx-busy']);
    // The host: 'scope-owed' keeps failing (a long backoff keeps it waiting), the others succeed.
    await setBehaviour(fx, FAMILY, 'scope-owed', 'fail');
    release = holdSqliteHost(fx); // as apsup run does: the SQLite term is live while its host holds the lock
    runtime = await startRuntime(fx, registrations, {
      env: { [`${P}ARTIFACT_PROCESSING_RETRY_BASE_SECONDS`]: '600', [`${P}ARTIFACT_PROCESSING_RETRY_MAX_SECONDS`]: '600' },
    });
    for (const scope of ['topic-7', 'topic-12', 'topic-31']) await runtime.trigger(FAMILY, scope);
    const env = { [`${P}DATABASE_URL`]: fx.url, [`${P}TASKS_MODULE`]: TASKS_MODULE };
    server = await ConsoleServer.start({
      address: { host: '127.0.0.1', port: 0 },
      store: runtime.store,
      config: runtime.config,
      taskConfig: parseTaskConfig(env),
      token: TOKEN,
      runtime,
      env,
    });
    const lease = await waitFor(async () => {
      const l = await fx.store.readLease('global');
      return l.holderId ? l : null;
    });
    s = { ...s, holderId: lease!.holderId!, generation: lease!.supervisorGeneration };
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (e) => {
      throw e;
    });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await runtime?.stop();
    release?.();
    await fx?.cleanup();
  });

  const cell = (text: string) => page.locator('main td', { hasText: text }).first();

  test('overview: the family, the held term and the tasks', async () => {
    await page.goto(`${server.url}/`);
    await cell(FAMILY).waitFor();
    await cell(s.holderId).waitFor();
    const term = page.locator('main tr', { hasText: 'global' }).first();
    assert.match(await term.innerText(), new RegExp(`live[\\s\\S]*${s.holderId}[\\s\\S]*\\b${s.generation}\\b`));
    await page.locator('header .pill', { hasText: `leader ${s.holderId}` }).waitFor();
    const shot =
      process.env.APSUP_UPDATE_SCREENSHOT === '1' ? path.join(ROOT, 'docs', 'console.png') : path.join(os.tmpdir(), `apsup-console-${process.pid}.png`);
    fs.mkdirSync(path.dirname(shot), { recursive: true });
    // The host's view: the failing scope backs off, the others were invoked.
    const familyRow = page.locator('main section', { hasText: 'Families' }).locator('tr', { hasText: FAMILY });
    // family, schedule, next due, scan, owed, dirty, budget, backing off, health: one key waits for its retry.
    await waitFor(async () => /\bbacking off\b|\t1\tok/.test(await familyRow.innerText()));
    await page.waitForFunction(() => document.querySelectorAll('aps-sparkline polyline').length >= 7);
    await page.screenshot({ path: shot, fullPage: false });
    assert.deepEqual([...fs.readFileSync(shot).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  });

  test('family and scope pages: the failing scope, owed with its generations and backing off', async () => {
    await page.goto(`${server.url}/#/families/${FAMILY}`);
    const row = page.locator('main tr', { hasText: 'scope-owed' }).first();
    await row.waitFor();
    assert.match(await row.innerText(), /2 \/ 0/);
    const backoff = page.locator('main section', { hasText: 'Backoff' }).locator('tr', { hasText: 'scope-owed' });
    assert.match(await backoff.innerText(), /failed[\s\S]*scripted failure/);
    await row.locator('a', { hasText: 'scope-owed' }).click();
    await page.locator('main dd', { hasText: '2 / 0' }).waitFor();
  });

  test('the failed task and its error', async () => {
    await page.goto(`${server.url}/#/tasks?state=failed`);
    await page.locator(`main tr[data-task-id="${s.failedTaskId}"][data-state="failed"]`).waitFor();
    await page.goto(`${server.url}/#/tasks/${s.failedTaskId}`);
    const message = page.locator('main pre.error-message');
    await message.waitFor();
    assert.equal(await message.textContent(), 'index build failed: disk full');
    assert.equal(await page.locator('main .error-code').textContent(), 'handler_error');
    // Back to a page whose answer did not change (304): it is shown again, not left empty.
    await page.goto(`${server.url}/#/tasks?state=failed`);
    await page.locator(`main tr[data-task-id="${s.failedTaskId}"][data-state="failed"]`).waitFor();
  });

  async function cancelPending(): Promise<string> {
    await page.goto(`${server.url}/#/tasks`);
    const row = page.locator(`main tr[data-task-id="${s.pendingTaskId}"]`);
    await row.waitFor();
    const toasts = await page.locator('.toast').count();
    await row.locator('button[data-action="cancel"]').click();
    await page.locator('dialog.confirm button[data-confirm]').click();
    const toast = page.locator('.toast').nth(toasts);
    await toast.waitFor();
    return (await toast.textContent()) ?? '';
  }

  test('cancel is refused without the token and with a wrong one', async () => {
    assert.match(await cancelPending(), /refused: 401/);
    assert.equal((await tasks().read(s.pendingTaskId))?.state, 'pending');
    await page.fill('#token', 'not-the-operator-token');
    await page.click('header form.token button[type="submit"]');
    assert.match(await cancelPending(), /refused: 403/);
    assert.equal((await tasks().read(s.pendingTaskId))?.state, 'pending');
  });

  test('with the token in the page, the pending task is cancelled', async () => {
    await page.fill('#token', TOKEN);
    await page.click('header form.token button[type="submit"]');
    await page.locator('header .pill', { hasText: 'actions enabled' }).waitFor();
    assert.match(await cancelPending(), /Cancel task: done/);
    await page.locator(`main tr[data-task-id="${s.pendingTaskId}"][data-state="cancelled"]`).waitFor();
    assert.equal((await tasks().read(s.pendingTaskId))?.state, 'cancelled');
  });
});
