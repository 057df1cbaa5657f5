// Every value the console shows is user data (issue 44): a task payload, an error message and a
// scope id holding markup render as text in the browser's DOM — no element is made from them
// and no handler in them runs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ConsoleServer } from '../../src/console/server.ts';
import { createBackend, type BackendFixture } from '../helpers/backends.ts';
import { launchBrowser } from './browser.ts';
import { FAMILY, TOKEN, holdSqliteHost, seed, startConsole, type Seeded } from './harness.ts';

const PAYLOAD_MARKUP = '<script>window.__xss = "payload"</script>';
const ERROR_MARKUP = '<script>window.__xss = "error"</script><img src=x onerror="window.__xss = \'img\'">';
const SCOPE_MARKUP = '<img src=x onerror="window.__xss = \'scope\'">';

describe('[sqlite] console escaping', () => {
  let fx: BackendFixture;
  let s: Seeded;
  let server: ConsoleServer;
  let release: () => void;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;

  before(async () => {
    fx = await createBackend('sqlite');
    release = holdSqliteHost(fx);
    s = await seed(fx, { payload: { note: PAYLOAD_MARKUP }, errorMessage: ERROR_MARKUP });
    await fx.store.acceptRequest(s.binding, SCOPE_MARKUP);
    server = await startConsole(fx, { token: TOKEN });
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    release?.();
    await fx?.cleanup();
  });

  /** No element was made from the data: the page's own markup has no script or img in main. */
  async function assertInert(): Promise<void> {
    assert.equal(await page.locator('main script, main img, main iframe').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss ?? null), null);
  }

  test('task detail: payload and error message are text', async () => {
    await page.goto(`${server.url}/#/tasks/${s.failedTaskId}`);
    const error = page.locator('main pre.error-message');
    await error.waitFor();
    assert.equal(await error.textContent(), ERROR_MARKUP);
    const payload = page.locator('main pre.json').first();
    assert.equal(JSON.parse((await payload.textContent())!).note, PAYLOAD_MARKUP);
    await assertInert();
  });

  test('overview: the latest failure with its error is text', async () => {
    await page.goto(`${server.url}/`);
    const cell = page.locator('main .error-text', { hasText: '<script>' }).first();
    await cell.waitFor();
    assert.equal(await cell.textContent(), ERROR_MARKUP);
    await assertInert();
  });

  test('family page: a scope id with markup is text, and its link stays inside the console', async () => {
    await page.goto(`${server.url}/#/families/${FAMILY}`);
    const link = page.locator('main a', { hasText: SCOPE_MARKUP });
    await link.waitFor();
    assert.match((await link.getAttribute('href'))!, /^#\/families\/cx-alpha\/scopes\/%3Cimg/);
    await link.click();
    await page.locator('main h1', { hasText: SCOPE_MARKUP }).waitFor();
    await assertInert();
  });
});
