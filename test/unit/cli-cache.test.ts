// The compiled CLI (bin/cli-cache.mjs): built once, reused while src/ is unchanged, rebuilt when it
// changes, and never in the way: every failure or APSUP_CLI_PRECOMPILE=0 means "run from source".
// Builds run on a copy of package.json and src/ in a temporary directory.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { createRequire } from 'node:module';
import { cliBundle, PACKAGE_ROOT, PRECOMPILE_VARIABLE, resolveEsbuildPackage } from '../../bin/cli-cache.mjs';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function packageCopy(): { root: string; cacheDir: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-cli-cache-'));
  dirs.push(root);
  fs.copyFileSync(path.join(PACKAGE_ROOT, 'package.json'), path.join(root, 'package.json'));
  fs.cpSync(path.join(PACKAGE_ROOT, 'src'), path.join(root, 'src'), { recursive: true, preserveTimestamps: true });
  // As in an install: src/child/entry.ts imports bin/cli-cache.mjs, and the compiled packages
  // (package.json apsup.compiledPackages) resolve from node_modules.
  fs.cpSync(path.join(PACKAGE_ROOT, 'bin'), path.join(root, 'bin'), { recursive: true });
  fs.symlinkSync(path.join(PACKAGE_ROOT, 'node_modules'), path.join(root, 'node_modules'));
  return { root, cacheDir: path.join(root, 'var', 'cache', 'cli') };
}

function withPrecompile<T>(value: string | undefined, fn: () => T): T {
  const saved = process.env[PRECOMPILE_VARIABLE];
  if (value === undefined) delete process.env[PRECOMPILE_VARIABLE];
  else process.env[PRECOMPILE_VARIABLE] = value;
  try {
    return fn();
  } finally {
    if (saved === undefined) delete process.env[PRECOMPILE_VARIABLE];
    else process.env[PRECOMPILE_VARIABLE] = saved;
  }
}

const bundle = (options: { root: string; cacheDir: string }) => withPrecompile(undefined, () => cliBundle(options));

test('built once, reused while src/ is unchanged, rebuilt when a source file changes', () => {
  const copy = packageCopy();
  const first = bundle(copy);
  assert.ok(first, 'the CLI compiles');
  assert.equal(path.dirname(path.dirname(first)), copy.cacheDir);
  assert.ok(fs.existsSync(path.join(path.dirname(first), 'complete')));
  assert.match(fs.readFileSync(first, 'utf8'), /export\s*\{[^}]*\bcli\b/);
  // zod (package.json apsup.compiledPackages) is compiled in, not loaded file by file from node_modules.
  const chunks = fs.readdirSync(path.dirname(first)).filter((f) => f.endsWith('.mjs'));
  for (const f of chunks) assert.doesNotMatch(fs.readFileSync(path.join(path.dirname(first), f), 'utf8'), /from\s*["']zod["']/, f);

  // Same length and mtime, but no longer valid TypeScript: a cache hit does not notice (no build).
  const file = path.join(copy.root, 'src', 'cli', 'commands.ts');
  const stat = fs.statSync(file);
  const broken = '@'.repeat(stat.size);
  fs.writeFileSync(file, broken);
  fs.utimesSync(file, stat.atime, stat.mtime);
  assert.equal(bundle(copy), first);
  assert.deepEqual(fs.readdirSync(copy.cacheDir), [path.basename(path.dirname(first))], 'no second build, no temporary directory left');

  // A changed file is another key: a build, which fails here (null: run from source) ...
  fs.appendFileSync(file, ' ');
  assert.equal(bundle(copy), null);
  // ... and succeeds once the file compiles again, into a new directory.
  fs.copyFileSync(path.join(PACKAGE_ROOT, 'src', 'cli', 'commands.ts'), file);
  fs.appendFileSync(file, '\n// changed\n');
  const second = bundle(copy);
  assert.ok(second);
  assert.notEqual(path.dirname(second), path.dirname(first));
  assert.ok(fs.existsSync(path.join(path.dirname(second), 'complete')));
  assert.ok(fs.existsSync(first), 'the previous build stays (a running CLI may load its lazy chunks)');
});

test('a bundled module that uses import.meta fails the build: run from source', () => {
  const copy = packageCopy();
  fs.writeFileSync(path.join(copy.root, 'src', 'cli', 'meta-user.ts'), 'export const here = import.meta.dirname;\n');
  fs.appendFileSync(path.join(copy.root, 'src', 'cli', 'main.ts'), "\nexport { here } from './meta-user.ts';\n");
  assert.equal(bundle(copy), null);
  assert.equal(fs.existsSync(copy.cacheDir) ? fs.readdirSync(copy.cacheDir).length : 0, 0, 'nothing cached');
});

test('APSUP_CLI_PRECOMPILE=0 and an unwritable cache directory: null (run from source)', () => {
  const copy = packageCopy();
  assert.equal(
    withPrecompile('0', () => cliBundle(copy)),
    null,
  );
  assert.equal(fs.existsSync(copy.cacheDir), false, 'nothing built');
  // A file where the cache directory's parent should be (a read-only install fails the same way).
  fs.writeFileSync(path.join(copy.root, 'var'), '');
  assert.equal(bundle(copy), null);
});

/** Runs bin/apsup.mjs; stderr ends with whether tsx was registered (its CJS hook adds require.extensions['.ts']). */
function apsup(args: string[], extra: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string; tsx: boolean } {
  const probe = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-cli-probe-')), 'probe.mjs');
  dirs.push(path.dirname(probe));
  fs.writeFileSync(
    probe,
    "import { createRequire } from 'node:module';\n" +
      "process.on('exit', () => process.stderr.write('\\ntsx:' + ('.ts' in createRequire(import.meta.url).extensions)));\n",
  );
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('APSUP_') && !k.startsWith('NODE_TEST')));
  const r = spawnSync(process.execPath, ['--import', probe, path.join(PACKAGE_ROOT, 'bin', 'apsup.mjs'), ...args], {
    cwd: PACKAGE_ROOT,
    env: { ...env, ...extra },
    encoding: 'utf8',
  });
  const m = /\ntsx:(true|false)$/.exec(r.stderr);
  assert.ok(m, r.stderr);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.slice(0, m.index), tsx: m[1] === 'true' };
}

test('apsup --help through bin/apsup.mjs: compiled without tsx, and from source with APSUP_CLI_PRECOMPILE=0', () => {
  const compiled = apsup(['--help']);
  assert.equal(compiled.status, 0, compiled.stderr);
  assert.equal(compiled.tsx, false, 'the compiled CLI loads no TypeScript loader for --help');
  const source = apsup(['--help'], { [PRECOMPILE_VARIABLE]: '0' });
  assert.equal(source.status, 0, source.stderr);
  assert.equal(source.tsx, true);
  assert.match(compiled.stdout, /apsup/);
  assert.equal(compiled.stdout, source.stdout);
});

test('a TypeScript families module through the compiled CLI: the loader is registered when it is imported', () => {
  const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-cli-db-')), 'a.sqlite');
  dirs.push(path.dirname(db));
  const r = apsup(['trigger', 'nope', 's1', '--families', path.join(PACKAGE_ROOT, 'test', 'fixtures', 'families', 'idle.ts')], {
    POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: `sqlite:${db}`,
  });
  // The module's registrations were read: the refusal lists them.
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /unknown family "nope" \(registered: fx-idle, fx-manual\)/);
  assert.equal(r.tsx, true);
});

test("esbuild is found hoisted or, failing that, as tsx's own dependency (the CLI's and the host's one rule)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-esbuild-rule-'));
  dirs.push(root);
  const pkg = (dir: string, name: string) => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version: '0.0.0', main: 'index.js' }));
    fs.writeFileSync(path.join(dir, 'index.js'), '');
  };
  pkg(path.join(root, 'node_modules', 'tsx'), 'tsx');
  const nested = path.join(root, 'node_modules', 'tsx', 'node_modules', 'esbuild');
  pkg(nested, 'esbuild');
  const from = createRequire(path.join(root, 'index.js'));
  assert.equal(resolveEsbuildPackage(from), path.join(nested, 'package.json'), "tsx's own esbuild when none is hoisted");
  const hoisted = path.join(root, 'node_modules', 'esbuild');
  pkg(hoisted, 'esbuild');
  assert.equal(resolveEsbuildPackage(from), path.join(hoisted, 'package.json'), 'the hoisted one first');
});
