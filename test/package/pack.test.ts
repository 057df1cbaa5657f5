// The package as a user installs it: `npm pack`, installed into a default `npm init -y` project
// (CommonJS: no "type": "module"), then the README's "Hosting your own processors" example, copied
// from the README unchanged, type-checks against the `exports` map and runs through `npx apsup`
// until its processor has committed and acknowledged. Offline: the project's node_modules holds
// the unpacked tarball and links to this checkout's installed dependencies (what `npm install`
// of the tarball would put there).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { PACKAGE_ROOT } from '../../src/paths.ts';
import { waitFor } from '../helpers/backends.ts';

const NAME = 'artifact-processing-supervisor';

function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env: { ...process.env, ...env }, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) || 1 : 0, stdout, stderr });
    });
  });
}

/** The README's example files, exactly as the README shows them. */
function readmeExample(): Record<string, string> {
  const readme = fs.readFileSync(path.join(PACKAGE_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Hosting your own processors'));
  const files: Record<string, string> = {};
  for (const m of section.matchAll(/```ts\n(\/\/ ([a-z-]+\.ts)[^\n]*\n[\s\S]*?)```/g)) {
    if (!(m[2] in files)) files[m[2]] = m[1];
  }
  assert.deepEqual(Object.keys(files).sort(), ['my-families.ts', 'skill-processor.ts']);
  return files;
}

/** A default npm project with the packed tarball installed (offline). */
async function installedProject(): Promise<{ dir: string; done(): void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-pack-'));
  const packDir = path.join(dir, 'pack');
  fs.mkdirSync(packDir);
  const packed = await sh('npm', ['pack', '--pack-destination', packDir, '--json', '--ignore-scripts'], PACKAGE_ROOT);
  assert.equal(packed.code, 0, packed.stderr);
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const shipped = info.files.map((f) => f.path);
  assert.ok(!shipped.some((f) => f.startsWith('test/') || f.startsWith('node_modules/')), 'tests are not shipped');
  assert.ok(!shipped.some((f) => f.startsWith('var/')), 'no database or compiled CLI of this checkout is shipped');
  for (const needed of [
    'bin/apsup.mjs',
    'bin/cli-cache.mjs',
    'src/sdk/index.ts',
    'sql/sqlite/pc_aps_mark_dirty.sql',
    'procedures/oceanbase/pc_aps_mark_dirty.sql',
    'migrations/sqlite/CHECKSUMS',
    // The web console's page: served as shipped, no build step.
    'src/console/static/index.html',
    'src/console/static/app.js',
    'src/console/static/style.css',
  ]) {
    assert.ok(shipped.includes(needed), `${needed} is in the tarball`);
  }
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const init = await sh('npm', ['init', '-y'], project);
  assert.equal(init.code, 0, init.stderr);
  const pkg = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as { type?: string };
  assert.notEqual(pkg.type, 'module', 'a default project is CommonJS');
  const modules = path.join(project, 'node_modules');
  fs.mkdirSync(path.join(modules, '.bin'), { recursive: true });
  const installed = path.join(modules, NAME);
  fs.mkdirSync(installed);
  const untar = await sh('tar', ['xzf', path.join(packDir, info.filename), '-C', installed, '--strip-components=1'], project);
  assert.equal(untar.code, 0, untar.stderr);
  const deps = fs.realpathSync(path.join(PACKAGE_ROOT, 'node_modules'));
  for (const entry of fs.readdirSync(deps)) {
    if (entry === '.bin' || entry === NAME || entry.startsWith('.')) continue;
    fs.symlinkSync(path.join(deps, entry), path.join(modules, entry));
  }
  fs.symlinkSync(path.join('..', NAME, 'bin', 'apsup.mjs'), path.join(modules, '.bin', 'apsup'));
  return { dir: project, done: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

test('npm pack -> npm init -y project: the README example type-checks and runs through npx apsup', { timeout: 300_000 }, async () => {
  const { dir, done } = await installedProject();
  let child: ReturnType<typeof spawn> | null = null;
  try {
    for (const [file, text] of Object.entries(readmeExample())) fs.writeFileSync(path.join(dir, file), text);
    // Types through the exports map (a typo in a registration would fail here).
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          allowImportingTsExtensions: true,
          types: ['node'],
        },
        include: ['*.ts'],
      }),
    );
    const tsc = await sh(process.execPath, [path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], dir);
    assert.equal(tsc.code, 0, `tsc: ${tsc.stdout}${tsc.stderr}`);

    const dbFile = path.join(dir, 'var', 'app.sqlite');
    const env = { POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: `sqlite:${dbFile}`, APSUP_LOG_LEVEL: 'warn' };
    const npx = (args: string[]) => sh('npx', ['--no-install', 'apsup', ...args], dir, env);
    const up = await npx(['migrate', 'up']);
    assert.equal(up.code, 0, up.stderr);
    // The installed copy compiled its CLI once, into its own directory (bin/cli-cache.mjs).
    const compiled = path.join(dir, 'node_modules', NAME, 'var', 'cache', 'cli');
    assert.equal(fs.readdirSync(compiled).filter((d) => fs.existsSync(path.join(compiled, d, 'complete'))).length, 1);
    const db = new Database(dbFile);
    try {
      db.exec('CREATE TABLE my_inputs (scope_id TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (scope_id, seq))');
      db.exec('CREATE TABLE my_progress (scope_id TEXT PRIMARY KEY, through_seq INTEGER NOT NULL)');
      db.exec("INSERT INTO my_inputs VALUES ('s1', 1), ('s1', 2); INSERT INTO my_progress VALUES ('s1', 0)");
    } finally {
      db.close();
    }
    const trigger = await npx(['trigger', 'skill', 's1', '--families', './my-families.ts']);
    assert.equal(trigger.code, 0, trigger.stderr);
    assert.match(trigger.stdout, /"requestedGeneration":1/);

    let log = '';
    child = spawn('npx', ['--no-install', 'apsup', 'run', '--families', './my-families.ts'], {
      cwd: dir,
      env: { ...process.env, ...env, POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout!.on('data', (d) => {
      log += String(d);
    });
    child.stderr!.on('data', (d) => {
      log += String(d);
    });
    const reader = new Database(dbFile, { readonly: true });
    try {
      await waitFor(() => {
        const row = reader
          .prepare(
            "SELECT p.through_seq AS t, i.handled_generation AS h FROM my_progress p, pc_artifact_processing_intents i WHERE p.scope_id = 's1' AND i.scope_id = 's1'",
          )
          .get() as { t: number; h: number } | undefined;
        return row?.t === 2 && row.h === 1;
      }, 90_000).catch((error: Error) => {
        throw new Error(`${error.message}; apsup run said: ${log.slice(-4000)}`);
      });
    } finally {
      reader.close();
    }
    assert.doesNotMatch(log, /Cannot require\(\) ES Module/);
  } finally {
    if (child?.pid) {
      try {
        process.kill(-child.pid, 'SIGINT');
      } catch {
        /* gone */
      }
      await new Promise((resolve) => {
        child!.once('exit', resolve);
        setTimeout(resolve, 15_000).unref();
      });
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    done();
  }
});

test('the exports map: ., ./sdk, ./store, ./tasks resolve with types; nothing else but ./src/* (deprecated) and ./package.json', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types: string; default: string }>;
  };
  assert.deepEqual(Object.keys(pkg.exports), ['.', './sdk', './store', './tasks', './package.json', './src/*']);
  for (const key of ['.', './sdk', './store', './tasks']) {
    const entry = pkg.exports[key] as { types: string; default: string };
    assert.ok(fs.existsSync(path.join(PACKAGE_ROOT, entry.types)) && entry.types === entry.default, key);
  }
});
