// The host compiles a child's TypeScript user modules (src/child/user-modules.ts) so that its
// worker processes import them without tsx: one output per source (a shared module stays one
// instance), each with its source's import.meta, never run once a source changed, and the
// graphs it cannot compile faithfully left to tsx with the reason.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';
import { USER_MODULES_VARIABLE } from '../../src/child/ts-loader.ts';
import { compileUserModules } from '../../src/child/user-modules.ts';
import { PACKAGE_ROOT } from '../../src/paths.ts';
import { fixtureChild } from '../helpers/fixture-child.ts';

// Inside the package (gitignored var/): package imports resolve from here as from a project.
const dir = path.join(PACKAGE_ROOT, 'var', `test-user-modules-${crypto.randomBytes(4).toString('hex')}`);
const cache = path.join(dir, 'cache');
fs.mkdirSync(dir, { recursive: true });
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

function runChild(manifest: string, files: string[]): { values: Record<string, unknown>[]; outputs: (string | null)[]; tsx: boolean } {
  const child = fixtureChild('test/fixtures/user-modules-child.ts');
  const out = execFileSync(process.execPath, [...child.args, ...files], {
    env: { ...process.env, ...child.env, [USER_MODULES_VARIABLE]: manifest },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

/** A host's start-up compile in a new process: its result and whether it ran esbuild. */
function compileInChild(files: string[]): { result: { manifest?: string; reason?: string }; builds: number } {
  const child = fixtureChild('test/fixtures/user-modules-compile-child.ts');
  const out = execFileSync(process.execPath, [...child.args, cache, ...files], { env: { ...process.env, ...child.env }, encoding: 'utf8' });
  return JSON.parse(out);
}

const shared = write(
  'lib/shared.ts',
  'let count = 0;\nexport function bump(): number {\n  return ++count;\n}\nexport const sharedUrl: string = import.meta.url;\n',
);
const a = write(
  'a.ts',
  [
    "import { z } from 'zod';",
    "import { defineTaskHandler } from 'artifact-processing-supervisor/tasks';",
    "import { bump, sharedUrl } from './lib/shared.ts';",
    'const n: number = bump();',
    'export default { n, sharedUrl, url: import.meta.url, dirname: import.meta.dirname, parsed: z.number().parse(7), sdk: typeof defineTaskHandler };',
    '',
  ].join('\n'),
);
const b = write('b.ts', "import { bump } from './lib/shared.ts';\nexport default { n: bump(), version: 'one' };\n");

test('compiled modules load without tsx, share one instance of a module they both import, and keep their sources’ import.meta', async () => {
  const r = await compileUserModules([a, b], cache);
  assert.ok('manifest' in r, JSON.stringify(r));
  const seen = runChild(r.manifest, [a, b]);
  assert.equal(seen.tsx, false, 'no TypeScript loader registered');
  assert.ok(seen.outputs.every((o) => o?.startsWith(cache + path.sep) === true));
  assert.deepEqual(
    seen.values.map((v) => v.n),
    [1, 2],
    'one module instance of lib/shared.ts for both',
  );
  const [va] = seen.values;
  assert.equal(va!.url, pathToFileURL(a).href);
  assert.equal(va!.dirname, dir);
  assert.equal(va!.sharedUrl, pathToFileURL(shared).href);
  assert.equal(va!.parsed, 7);
  assert.equal(va!.sdk, 'function', 'the SDK imported by package name, TypeScript in the package, compiled too');
  const again = await compileUserModules([b, a], cache);
  assert.deepEqual(again, r, 'reused while no source changed');
});

test('an edited source is never run stale: the child loads the sources through tsx', async () => {
  const r = await compileUserModules([a, b], cache);
  assert.ok('manifest' in r);
  // An edit of the shared module, which the compiled a.ts and b.ts import: none of them is used.
  const before = fs.readFileSync(shared, 'utf8');
  fs.writeFileSync(shared, before.replace('return ++count;', 'return 100 + ++count;'));
  try {
    const seen = runChild(r.manifest, [b]);
    assert.equal(seen.tsx, true);
    assert.deepEqual(seen.outputs, [null]);
    assert.equal(seen.values[0]!.n, 101);
  } finally {
    fs.writeFileSync(shared, before);
  }
  // An edit of the entry itself.
  const r2 = await compileUserModules([a, b], cache);
  assert.ok('manifest' in r2);
  fs.writeFileSync(b, fs.readFileSync(b, 'utf8').replace("'one'", "'two'"));
  const seen = runChild(r2.manifest, [b]);
  assert.equal(seen.tsx, true);
  assert.equal(seen.values[0]!.version, 'two');
  const r3 = await compileUserModules([a, b], cache);
  assert.ok('manifest' in r3);
  assert.notEqual(r3.manifest, r2.manifest, 'recompiled after the edit');
  assert.equal(runChild(r3.manifest, [b]).values[0]!.version, 'two');
});

test('a later host reuses the recorded build without esbuild until a source, a file beside one or an imported package file changes', async () => {
  const pkg = write('node_modules/recorded-pkg/index.js', 'export const version = 1;\n');
  write('node_modules/recorded-pkg/package.json', '{"name":"recorded-pkg","type":"module","main":"index.js"}');
  const entry = write('rec/entry.ts', "import { version } from 'recorded-pkg';\nimport { part } from './part';\nexport default { version, part };\n");
  write('rec/part/index.ts', "export const part = 'directory';\n");
  const first = compileInChild([entry]);
  assert.ok(first.result.manifest, JSON.stringify(first.result));
  assert.equal(first.builds, 1, 'the first host compiles');
  const second = compileInChild([entry]);
  assert.deepEqual(second, { result: first.result, builds: 0 }, 'a later host reuses the record without esbuild');
  assert.deepEqual(runChild(second.result.manifest!, [entry]).values, [{ version: 1, part: 'directory' }]);

  // A file added beside the importer changes what './part' resolves to: compiled again, and run.
  write('rec/part.ts', "export const part = 'file';\n");
  const shadowed = compileInChild([entry]);
  assert.equal(shadowed.builds, 1, 'a new file beside a source compiles the graph again');
  const seen = runChild(shadowed.result.manifest!, [entry]);
  assert.equal(seen.tsx, false);
  assert.deepEqual(seen.values, [{ version: 1, part: 'file' }]);
  assert.equal(compileInChild([entry]).builds, 0);

  // A package reinstalled in place (a new file at the same path): compiled again.
  fs.rmSync(pkg);
  write('node_modules/recorded-pkg/index.js', 'export const version = 2;\n');
  const upgraded = compileInChild([entry]);
  assert.equal(upgraded.builds, 1, 'a changed package file compiles the graph again');
  assert.deepEqual(runChild(upgraded.result.manifest!, [entry]).values, [{ version: 2, part: 'file' }]);

  // An edited source: compiled again (the outputs of the old one are never used, test above).
  fs.writeFileSync(path.join(dir, 'rec/part.ts'), "export const part = 'edited';\n");
  const edited = compileInChild([entry]);
  assert.equal(edited.builds, 1);
  assert.notEqual(edited.result.manifest, upgraded.result.manifest);
  assert.deepEqual(runChild(edited.result.manifest!, [entry]).values, [{ version: 2, part: 'edited' }]);
});

test('graphs that cannot be compiled faithfully are left to tsx, with the reason', async () => {
  const cjs = write('cjs/legacy.ts', "const x = require('node:path');\nmodule.exports = { x };\n");
  const importsCjs = write('cjs/entry.ts', "import './legacy.ts';\nexport default 1;\n");
  const computed = write('computed.ts', "const name = './b.ts';\nexport default () => import(name);\n");
  const resolves = write('resolves.ts', "export default import.meta.resolve('./b.ts');\n");
  const json = write('json.ts', "import data from './data.json' with { type: 'json' };\nexport default data;\n");
  write('data.json', '{"a":1}');
  const reasons = await Promise.all([importsCjs, computed, resolves, json].map((f) => compileUserModules([f], cache)));
  assert.match(String((reasons[0] as { reason: string }).reason), /legacy\.ts is CommonJS/);
  assert.match(String((reasons[1] as { reason: string }).reason), /computed\.ts uses import\.meta\.resolve or an import\(\) of a computed specifier/);
  assert.match(String((reasons[2] as { reason: string }).reason), /resolves\.ts uses import\.meta\.resolve/);
  assert.match(String((reasons[3] as { reason: string }).reason), /data\.json is not a JavaScript or TypeScript module/);
  assert.deepEqual(await compileUserModules([path.join(PACKAGE_ROOT, 'bench', 'fixtures', 'noop.processor.ts').replace('.ts', '.mjs')], cache), {
    reason: 'no TypeScript module',
  });
  void cjs;
  process.env.APSUP_CHILD_PRECOMPILE = '0';
  try {
    assert.deepEqual(await compileUserModules([a], cache), { reason: 'APSUP_CHILD_PRECOMPILE=0' });
  } finally {
    delete process.env.APSUP_CHILD_PRECOMPILE;
  }
});
