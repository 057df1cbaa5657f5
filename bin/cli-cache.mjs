// The CLI compiled once into plain JavaScript (esbuild, which tsx brings), so a command does not
// pay about two CPU-seconds for tsx's hooks and compiling src/ on every start. Plain JavaScript:
// it runs before any TypeScript loader. The cache (var/cache/cli/<key>/, gitignored) is keyed by
// a cheap walk of src/ (path, size, mtime) and the versions involved; a hit loads no esbuild.
// Any failure returns null and bin/apsup.mjs runs the CLI from source under tsx, as before.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const PRECOMPILE_VARIABLE = 'APSUP_CLI_PRECOMPILE';
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Bundled modules whose import.meta use works from any directory of the package (as in src/child/entry.ts). */
// child/user-modules.ts only names import.meta (the define keys of the modules it compiles).
const META_USERS = new Set([
  'paths.ts',
  path.join('store', 'sqlite', 'sqlite-read-process.ts'),
  path.join('child', 'entry.ts'),
  path.join('child', 'user-modules.ts'),
]);
/** Builds kept besides the current one; older ones go once they are an hour old (a running CLI may still load a lazy chunk). */
const KEEP = 3;
const PRUNE_AGE_MS = 3600_000;

/**
 * The path of the compiled CLI (exports `cli`), building it if needed, or null when it cannot be
 * used. `root` (a package copy) and `cacheDir` are for tests.
 */
export function cliBundle({ root = PACKAGE_ROOT, cacheDir = path.join(root, 'var', 'cache', 'cli') } = {}) {
  if (process.env[PRECOMPILE_VARIABLE] === '0') return null;
  try {
    const esbuildDir = path.dirname(resolveEsbuildPackage());
    const dir = path.join(cacheDir, cacheKey(root, esbuildDir));
    if (!fs.existsSync(path.join(dir, 'complete'))) {
      // A read-only install would otherwise pay for a build it cannot keep on every command.
      if (!writable(cacheDir)) return null;
      build(root, dir, createRequire(import.meta.url)(esbuildDir));
      prune(cacheDir, path.basename(dir));
    }
    return path.join(dir, 'main.mjs');
  } catch {
    return null;
  }
}

/**
 * Every package the manifest names, with its subpaths, except its `apsup.compiledPackages`:
 * external, loaded from node_modules. A compiled one is a pure-JavaScript ES module package whose
 * ~100 files cost every start a resolution and a compilation each: zod, about 0.06 CPU-s of a
 * command that does not load a user module (a user's schemas keep their own zod). Not the
 * OpenTelemetry API: prom-client loads its CommonJS build anyway. The child entries use the same
 * list (src/child/entry.ts, through bundleOptions). A list, not a plugin: esbuild's synchronous API takes no plugins.
 */
export function externalPackages(root = PACKAGE_ROOT) {
  return externalOf(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')));
}

function externalOf(manifest) {
  const compiled = new Set(manifest.apsup?.compiledPackages ?? []);
  const fields = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];
  const names = new Set(fields.flatMap((f) => Object.keys(manifest[f] ?? {})));
  return [...names].filter((n) => !compiled.has(n)).sort();
}

/** The bundle shape of the compiled CLI, the child entries (src/child/entry.ts) and the compiled tests. */
export function bundleOptions(root = PACKAGE_ROOT) {
  return { ...BUNDLE_SHAPE, external: externalPackages(root) };
}

const BUNDLE_SHAPE = {
  bundle: true,
  splitting: true, // a backend's driver and store stay lazy chunks, as in the source
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outExtension: { '.js': '.mjs' },
  logLevel: 'silent',
  keepNames: true, // isInstanceOf (src/child/ts-loader.ts) compares class names
};

/**
 * esbuild's package.json, hoisted or as tsx's own dependency (not loaded: a cache hit needs only
 * its version). The one rule for the CLI's compile and the host's (src/child/esbuild.ts).
 */
export function resolveEsbuildPackage(require = createRequire(import.meta.url)) {
  try {
    return require.resolve('esbuild/package.json');
  } catch {
    return createRequire(require.resolve('tsx/package.json')).resolve('esbuild/package.json');
  }
}

function cacheKey(root, esbuildDir) {
  const hash = crypto.createHash('sha256');
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const esbuildVersion = JSON.parse(fs.readFileSync(path.join(esbuildDir, 'package.json'), 'utf8')).version;
  hash.update(`${manifest.version}\0${esbuildVersion}\0`);
  hash.update(`${externalOf(manifest).join(',')}\0`); // what stays outside the bundle
  // This file holds the build options: a changed copy is another build.
  const self = fs.statSync(fileURLToPath(import.meta.url));
  hash.update(`${self.size}:${self.mtimeMs}\0`);
  const srcDir = path.join(root, 'src');
  const files = fs.readdirSync(srcDir, { recursive: true }).filter((f) => f.endsWith('.ts'));
  for (const file of files.sort()) {
    const stat = fs.statSync(path.join(srcDir, file));
    hash.update(`${file}\0${stat.size}:${stat.mtimeMs}\0`);
  }
  return hash.digest('hex').slice(0, 16);
}

/** Whether the cache directory, or the nearest existing directory above it, can be written. */
function writable(dir) {
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(d)) {
      try {
        fs.accessSync(d, fs.constants.W_OK);
        return true;
      } catch {
        return false;
      }
    }
    if (path.dirname(d) === d) return false;
  }
}

function build(root, dir, esbuild) {
  const srcDir = path.join(root, 'src');
  const outdir = path.dirname(dir);
  const result = esbuild.buildSync({
    ...bundleOptions(root),
    entryPoints: [{ in: path.join(srcDir, 'cli', 'main.ts'), out: 'main' }],
    outdir, // only for the relative chunk names; nothing is written by esbuild
    write: false,
    metafile: true,
    // One import.meta.url for every bundled module, that of src/paths.ts (see src/child/entry.ts).
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(path.join(srcDir, 'paths.ts')).href) },
  });
  for (const input of Object.keys(result.metafile.inputs)) {
    const file = path.resolve(input);
    if (!file.startsWith(srcDir + path.sep) || META_USERS.has(path.relative(srcDir, file))) continue;
    if (fs.readFileSync(file, 'utf8').includes('import.meta')) throw new Error(`${path.relative(root, file)} uses import.meta`);
  }
  // Written to a private directory and renamed: a concurrent command never sees half a build.
  const tmp = `${dir}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  try {
    for (const f of result.outputFiles) {
      const target = path.join(tmp, path.relative(outdir, f.path));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, f.contents);
    }
    fs.writeFileSync(path.join(tmp, 'complete'), '');
    fs.renameSync(tmp, dir);
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    // Lost the race to another command: its build is the same.
    if (!fs.existsSync(path.join(dir, 'complete'))) throw error;
  }
}

/** Builds other than `current` beyond the KEEP newest, once an hour old (also the compiled tests'). */
export function prune(cacheDir, current) {
  try {
    const builds = fs
      .readdirSync(cacheDir)
      .filter((name) => name !== current && /^[0-9a-f]{16}$/.test(name))
      .map((name) => ({ name, mtimeMs: fs.statSync(path.join(cacheDir, name)).mtimeMs }))
      .sort((a, b) => b.mtimeMs - a.mtimeMs);
    for (const { name, mtimeMs } of builds.slice(KEEP)) {
      if (Date.now() - mtimeMs > PRUNE_AGE_MS) fs.rmSync(path.join(cacheDir, name), { recursive: true, force: true });
    }
  } catch {
    // pruning is housekeeping: never a reason to fail the command
  }
}
