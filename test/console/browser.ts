/**
 * The system Chromium (apt-get install chromium; .ci/run installs it) driven by playwright-core,
 * headless with a fresh profile: its own browser download cannot reach the internet.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = process.env.APSUP_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** A persistent context on a fresh profile directory (playwright's form of --user-data-dir). */
export async function launchBrowser(viewport = { width: 1440, height: 900 }): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set APSUP_TEST_CHROMIUM)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
