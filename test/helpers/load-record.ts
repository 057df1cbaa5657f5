/**
 * Which processes loaded a package: test/fixtures/module-load-recorder.mjs preloaded in every
 * process started with `env` (NODE_OPTIONS is inherited by their children too).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const RECORDER = fileURLToPath(new URL('../fixtures/module-load-recorder.mjs', import.meta.url));

/** NODE_OPTIONS of this process with `--import <preload>` added. */
export function nodeOptionsWith(preload: string): string {
  return `${process.env.NODE_OPTIONS ?? ''} --import ${preload}`.trim();
}

/** The environment that records loads of `watch` into a file in `dir`, and the check of that file. */
export function loadRecorder(dir: string, watch = '@opentelemetry/api'): { env: Record<string, string>; assertNoneLoaded(): void } {
  const record = path.join(dir, 'loads.txt');
  return {
    env: { NODE_OPTIONS: nodeOptionsWith(RECORDER), APSUP_TEST_LOAD_RECORD: record, APSUP_TEST_LOAD_WATCH: watch },
    assertNoneLoaded() {
      const lines = fs.readFileSync(record, 'utf8').trim().split('\n');
      assert.ok(
        lines.some((l) => l.startsWith('start ')),
        `the recorder ran: ${lines.join('; ')}`,
      );
      assert.deepEqual(
        lines.filter((l) => l.startsWith('load ')),
        [],
        `no process loaded ${watch}`,
      );
    },
  };
}
