/**
 * How a child process entry is started. Under tsx every child would spend about a second of CPU
 * in loader hooks and compilation before its first message, so the entries are compiled once per
 * host process into plain JavaScript (esbuild, which tsx brings) in a gitignored, content-addressed
 * cache (var/cache/child/<hash>/); dynamic imports stay separate chunks, so a backend's driver is
 * loaded only on that backend. A child loads the TypeScript loader only when it imports a
 * TypeScript user module (ts-loader.ts). If compiling is not possible (no esbuild, a read-only
 * package directory) or APSUP_CHILD_PRECOMPILE=0, the child runs from source under tsx.
 */
import fs from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT, SRC_DIR } from '../paths.ts';
import { writeContentAddressed } from './cache-dir.ts';
import { bundleOptions } from '../../bin/cli-cache.mjs';
import { esbuildVersion, withEsbuildSync } from './esbuild.ts';

export type ChildEntryName = 'task-worker-main' | 'worker-main';

const SOURCES: Record<ChildEntryName, string> = {
  'task-worker-main': path.join(SRC_DIR, 'tasks', 'task-worker-main.ts'),
  'worker-main': path.join(SRC_DIR, 'worker', 'worker-main.ts'),
};

/** Set in a precompiled child's environment: user TypeScript modules need the loader registered. */
export const PRECOMPILED_VARIABLE = 'APSUP_CHILD_PRECOMPILED';
export const PRECOMPILE_VARIABLE = 'APSUP_CHILD_PRECOMPILE';
export const CACHE_DIR = path.join(PACKAGE_ROOT, 'var', 'cache', 'child');

export interface ChildEntry {
  modulePath: string;
  execArgv: string[];
  env: Record<string, string>;
  precompiled: boolean;
}

/** Bundled modules whose import.meta.url use works from any directory under src/. */
const META_URL_USERS = new Set(['paths.ts', path.join('store', 'sqlite', 'sqlite-read-process.ts')]);

let compiled: { dir: string } | { error: string } | null = null;
/** Bundles run by this process (tests: a recorded build is not bundled again). */
export const entryBuilds = { count: 0 };

/** The entry to fork for a child (compiles on first use in this process). */
export function childEntry(name: ChildEntryName): ChildEntry {
  if (process.env[PRECOMPILE_VARIABLE] !== '0') {
    compiled ??= compileKeyed(SOURCES, SRC_DIR, CACHE_DIR);
    if ('dir' in compiled) {
      return { modulePath: path.join(compiled.dir, `${name}.mjs`), execArgv: [], env: { [PRECOMPILED_VARIABLE]: '1' }, precompiled: true };
    }
  }
  return { modulePath: SOURCES[name], execArgv: ['--import', import.meta.resolve('tsx')], env: { [PRECOMPILED_VARIABLE]: '0' }, precompiled: false };
}

/**
 * compileEntries, run only when `srcDir` changed since a build was recorded for it: a host start
 * then costs a directory walk instead of a bundle (as bin/cli-cache.mjs does for the CLI). The key
 * is every TypeScript file's path, size and mtime under `srcDir` and esbuild's version; a recorded
 * build whose directory is gone is built again.
 */
export function compileKeyed(sources: Record<string, string>, srcDir: string, cacheDir: string): { dir: string } | { error: string } {
  let record: string | null = null;
  try {
    const hash = crypto.createHash('sha256').update(`${esbuildVersion()}\0${JSON.stringify(bundleOptions(PACKAGE_ROOT))}\0`);
    const files = fs.readdirSync(srcDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    for (const file of files.sort()) {
      const stat = fs.statSync(path.join(srcDir, file));
      hash.update(`${file}\0${stat.size}:${stat.mtimeMs}\0`);
    }
    record = path.join(cacheDir, `sources-${hash.digest('hex').slice(0, 16)}`);
    const dir = path.join(cacheDir, fs.readFileSync(record, 'utf8').trim());
    if (fs.existsSync(path.join(dir, 'complete'))) return { dir };
  } catch {
    // no record yet (or no esbuild): build
  }
  const built = compileEntries(sources, cacheDir);
  if (record && 'dir' in built) {
    try {
      const tmp = `${record}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, path.basename(built.dir));
      fs.renameSync(tmp, record);
    } catch {
      // an unwritable record only costs the next host a build
    }
  }
  return built;
}

/** Why the entries run under tsx, if they do (for a start-up log line). */
export function precompileError(): string | null {
  return compiled && 'error' in compiled ? compiled.error : null;
}

/**
 * Bundles `sources` (output name -> TypeScript entry) into `cacheDir`/<hash of the output>/, once:
 * the directory, or why it could not be done. Also used by the tests for their fixture children.
 */
export function compileEntries(sources: Record<string, string>, cacheDir: string): { dir: string } | { error: string } {
  entryBuilds.count += 1;
  try {
    const result = withEsbuildSync((esbuild) =>
      esbuild.buildSync({
        ...bundleOptions(PACKAGE_ROOT), // the CLI's shape: packages external but the compiled ones
        entryPoints: Object.entries(sources).map(([out, src]) => ({ in: src, out })),
        outdir: cacheDir, // only for the relative chunk names; nothing is written by esbuild
        write: false,
        metafile: true,
        // One import.meta.url for every bundled module: that of src/paths.ts (which finds the SQL
        // from it); a module whose use depends on its own directory would break, hence the check.
        define: { 'import.meta.url': JSON.stringify(pathToFileURL(path.join(SRC_DIR, 'paths.ts')).href) },
      }),
    );
    for (const input of Object.keys(result.metafile.inputs)) {
      const file = path.resolve(input);
      if (!file.startsWith(SRC_DIR) || META_URL_USERS.has(path.relative(SRC_DIR, file))) continue;
      if (fs.readFileSync(file, 'utf8').includes('import.meta'))
        throw new Error(`${path.relative(PACKAGE_ROOT, file)} uses import.meta; list it in entry.ts once its use is independent of its directory`);
    }
    const files = result.outputFiles.map((f) => ({ name: path.relative(cacheDir, f.path), contents: f.contents }));
    const dir = writeContentAddressed(cacheDir, files);
    return { dir };
  } catch (error) {
    const errors = (error as { errors?: { text: string }[] }).errors;
    return { error: errors?.[0]?.text ?? ((error as Error).message.split('\n')[0] || 'unknown error') };
  }
}
