// The module isolation of a task worker process (src/tasks/handler-modules.ts), without a
// database: which attempts import the registry and handler, and that a file changed on disk is
// never served from the kept instance.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { HandlerModules } from '../../src/tasks/handler-modules.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function fixture(): { registry: string; writeHandler: (code: number) => void; touchRegistry: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-modules-'));
  dirs.push(dir);
  const registry = path.join(dir, 'registry.mjs');
  const writeRegistry = (extra = '') =>
    fs.writeFileSync(
      registry,
      `const payload = { safeParse: (v) => ({ success: true, data: v }) };
export default [{ taskType: 't', currentVersion: 1, versions: { 1: './h.mjs' }, payload }];${extra}\n`,
    );
  writeRegistry();
  const writeHandler = (code: number) =>
    fs.writeFileSync(path.join(dir, 'h.mjs'), `let runs = 0;\nexport default { async run() { runs += 1; return { code: ${code}, runs }; } };\n`);
  writeHandler(1);
  return { registry, writeHandler, touchRegistry: () => writeRegistry('\n// changed') };
}

async function runOnce(m: HandlerModules): Promise<{ imported: boolean; result: unknown }> {
  const { registry, imported } = await m.forAttempt('t', 1);
  const handler = await registry.load('t', 1);
  return { imported, result: await handler.run(null as never, null as never) };
}

test('process isolation: one import serves later attempts, and the handler module keeps its state', async () => {
  const f = fixture();
  const m = new HandlerModules('process', f.registry);
  assert.equal(m.isLoaded('t', 1), false, 'nothing is imported before the first attempt');
  assert.deepEqual(await runOnce(m), { imported: true, result: { code: 1, runs: 1 } });
  assert.equal(m.isLoaded('t', 1), true);
  assert.deepEqual(await runOnce(m), { imported: false, result: { code: 1, runs: 2 } });
  assert.deepEqual(await runOnce(m), { imported: false, result: { code: 1, runs: 3 } });
});

test('process isolation: a handler file changed on disk is imported afresh before the next attempt', async () => {
  const f = fixture();
  const m = new HandlerModules('process', f.registry);
  await runOnce(m);
  f.writeHandler(2); // same size as before: the modification time tells
  assert.equal(m.isLoaded('t', 1), false, 'a changed file is not counted as loaded');
  assert.deepEqual(await runOnce(m), { imported: true, result: { code: 2, runs: 1 } });
  assert.deepEqual(await runOnce(m), { imported: false, result: { code: 2, runs: 2 } });
});

test('process isolation: a tasks module changed on disk is imported afresh', async () => {
  const f = fixture();
  const m = new HandlerModules('process', f.registry);
  await runOnce(m);
  f.touchRegistry();
  const r = await runOnce(m);
  assert.equal(r.imported, true);
  assert.deepEqual(r.result, { code: 1, runs: 1 }, 'its handlers are fresh instances too');
});

test('attempt isolation: every attempt imports fresh module instances', async () => {
  const f = fixture();
  const m = new HandlerModules('attempt', f.registry);
  for (let i = 0; i < 3; i += 1) {
    assert.equal(m.isLoaded('t', 1), false);
    assert.deepEqual(await runOnce(m), { imported: true, result: { code: 1, runs: 1 } });
  }
});

test('an unknown task type or version still fails closed through the kept registry', async () => {
  const f = fixture();
  const m = new HandlerModules('process', f.registry);
  await runOnce(m);
  const { registry } = await m.forAttempt('t', 7);
  assert.throws(() => registry.modulePath('t', 7), { code: 'unknown_handler_version' });
  const other = await m.forAttempt('nope', 1);
  assert.throws(() => other.registry.modulePath('nope', 1), { code: 'unknown_task_type' });
});
