// The standard-output destination of createLogger groups lines into few writes: every line still
// arrives, complete and in order, when the process exits at once after logging, when it logs at
// warn level (written immediately) and when many lines exceed the group size.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function runScript(body: string): { lines: Array<Record<string, unknown>>; status: number | null } {
  const script = `import { createLogger } from ${JSON.stringify(path.join(ROOT, 'src/logging.ts'))};\nconst log = createLogger({ level: 'info' });\n${body}`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { lines, status: r.status };
}

test('lines logged just before process.exit() are all written, in order', () => {
  const { lines, status } = runScript(`for (let i = 0; i < 5; i++) log.info({ i }, 'line');\nprocess.exit(3);`);
  assert.equal(status, 3);
  assert.deepEqual(
    lines.map((l) => l.i),
    [0, 1, 2, 3, 4],
  );
});

test('a warning (written at once, with the pending lines) keeps its place among the info lines', () => {
  const { lines } = runScript(`log.info({ i: 1 }, 'before');\nlog.warn({ i: 2 }, 'warning');\nlog.info({ i: 3 }, 'after');`);
  assert.deepEqual(
    lines.map((l) => l.i),
    [1, 2, 3],
  );
  assert.equal(lines[1].msg, 'warning');
});

test('more than one group of lines (beyond 64 KiB), with non-ASCII text, arrives complete', () => {
  const { lines } = runScript(`for (let i = 0; i < 2000; i++) log.info({ i, text: 'ключ-' + 'x'.repeat(60) }, 'bulk');`);
  assert.equal(lines.length, 2000);
  assert.deepEqual(
    lines.map((l) => l.i),
    Array.from({ length: 2000 }, (_, i) => i),
  );
  assert.ok(lines.every((l) => String(l.text).startsWith('ключ-')));
});
