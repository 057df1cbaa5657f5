// A precompiled CLI imports its own TypeScript user modules (the families module, the tasks
// module) from their compiled graph (src/child/host-import.ts), so the host registers no tsx;
// a module it cannot compile faithfully still loads, through tsx.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { createEphemeralDatabase } from '../../src/devtools/ephemeral-database.ts';
import { PACKAGE_ROOT } from '../../src/paths.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-host-import-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
// Reports whether the process registered module hooks (tsx does, through module.register).
const probe = path.join(tmp, 'probe.cjs');
fs.writeFileSync(
  probe,
  [
    "const m = require('node:module');",
    'const register = m.register;',
    'let hooks = 0;',
    'm.register = (...args) => { hooks += 1; return register(...args); };',
    'm.syncBuiltinESMExports();',
    "process.on('exit', () => require('node:fs').writeFileSync(process.env.PROBE_OUT, String(hooks)));",
  ].join('\n'),
);

const db = await createEphemeralDatabase('sqlite', { prefix: 'apsup_host_import' });
after(() => db.drop());

function cli(args: string[], env: Record<string, string> = {}): { status: number | null; output: string; tsx: boolean } {
  const out = path.join(tmp, `probe-${Math.random().toString(36).slice(2)}.out`);
  const r = spawnSync(process.execPath, ['--require', probe, 'bin/apsup.mjs', ...args], {
    cwd: PACKAGE_ROOT,
    env: { ...process.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: db.url, PROBE_OUT: out, ...env },
    encoding: 'utf8',
  });
  return { status: r.status, output: r.stdout + r.stderr, tsx: Number(fs.readFileSync(out, 'utf8')) > 0 };
}

test('a TypeScript families module and tasks module load in the CLI without tsx', () => {
  const status = cli(['status', '--families', 'test/fixtures/failover/families.ts']);
  assert.equal(status.status, 0, status.output);
  assert.match(status.output, /supervisors:/);
  assert.equal(status.tsx, false, 'the families module came from its compiled graph');

  const submit = cli(['tasks', 'submit', 'fx-quick', '--payload', '{}'], { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: 'test/fixtures/tasks/registry.ts' });
  assert.equal(submit.status, 0, submit.output);
  assert.equal(submit.tsx, false, 'the tasks module came from its compiled graph');
});

test('a families module the compiler leaves alone still loads, through tsx', () => {
  const module = path.join(PACKAGE_ROOT, 'var', `host-import-${process.pid}.families.ts`);
  // import.meta.resolve would resolve from the compiled output's directory: left to tsx.
  const families = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'failover', 'families.ts');
  fs.writeFileSync(
    module,
    `import families from ${JSON.stringify(families)};\nexport const here: string = import.meta.resolve('./x.ts');\nexport default families;\n`,
  );
  after(() => fs.rmSync(module, { force: true }));
  const status = cli(['status', '--families', module]);
  assert.equal(status.status, 0, status.output);
  assert.equal(status.tsx, true);
});
