/**
 * Plain-JavaScript copies of a child's TypeScript user modules (the tasks module and its handler
 * modules, a processor module, and every module they import outside node_modules), compiled by
 * the host before it starts its worker processes, so that each process imports them natively
 * instead of registering tsx, whose loader thread costs a process about half a second of CPU at
 * start-up (issue 12 item 3; test/child/user-modules.test.ts).
 *
 * One output per source module (no bundling), so module identity and sharing are the sources':
 * relative imports point at the other outputs, a package import at the file Node would load (its
 * absolute path), and a package file that is TypeScript (this package's SDK imported from source)
 * is compiled like a user module; import.meta.url, .filename and .dirname are the source's. The
 * outputs are written content-addressed under var/cache/user-modules/<hash>/ with a manifest of
 * source -> output and the source's file signature at compile time. A child uses an output only
 * while its source still has that signature, and none at all if any source of the manifest
 * changed since (ts-loader.ts): an edited module is never run stale. A graph-<key>.json record
 * lets a later host reuse a build without starting esbuild while no source, no source directory
 * and no imported package file changed.
 * Left to tsx as before (the reason is returned for a log line): CommonJS, a module that uses
 * import.meta.resolve or an import() whose specifier is not a string literal (it would resolve
 * from the output's directory), an import that is neither JavaScript nor TypeScript, no esbuild
 * or no writable cache, APSUP_CHILD_PRECOMPILE=0.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';
import { PACKAGE_ROOT } from '../paths.ts';
import { writeContentAddressed } from './cache-dir.ts';
import { PRECOMPILE_VARIABLE } from './entry.ts';
import { esbuildVersion, withEsbuild, type Esbuild } from './esbuild.ts';
import { fileSignature } from './file-signature.ts';
import { needsTsLoader } from './ts-loader.ts';

export const USER_MODULES_DIR = path.join(PACKAGE_ROOT, 'var', 'cache', 'user-modules');

/** manifest.json of a build: absolute source path -> its output and its signature when compiled. */
export interface UserModulesManifest {
  modules: Record<string, { out: string; signature: string }>;
}

export type CompileResult = { manifest: string } | { reason: string };

const SOURCE = /\.(?:ts|mts|tsx|js|mjs|jsx)$/i;
const TYPESCRIPT = /\.(?:ts|mts|cts|tsx)$/i;
/** import.meta.resolve, or an import() whose argument is not one string literal. */
const UNSAFE = [/\bimport\.meta\.resolve\b/, /\bimport\s*\(\s*(?!(['"])[^'"\n]*\1\s*[,)])/];

/** A file this compiles (a user module, or TypeScript in a package), not one Node loads itself. */
function compiles(file: string): boolean {
  return TYPESCRIPT.test(file) || !file.split(path.sep).includes('node_modules');
}

/** Where a source's output lives inside a build: its absolute path mirrored, `.mjs` appended. */
function outputName(source: string): string {
  return `${path.relative(path.parse(source).root, source)}.mjs`;
}

function relativeImport(fromSource: string, toSource: string): string {
  const rel = path
    .relative(path.dirname(outputName(fromSource)), outputName(toSource))
    .split(path.sep)
    .join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/**
 * Resolves every import as Node would (esbuild's resolver, no custom conditions); `onFile`
 * decides what a resolved file becomes (bundled input, or an external specifier).
 */
function resolver(onFile: (importer: string, file: string) => { path: string; external: boolean }): Plugin {
  return {
    name: 'apsup-user-modules',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData === 'inner') return undefined;
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        const r = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'inner' });
        if (r.errors.length > 0) return { errors: r.errors };
        return onFile(args.importer, r.path);
      });
    },
  };
}

const common = {
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  conditions: [] as string[],
  logLevel: 'silent',
  keepNames: true,
  absWorkingDir: '/', // outputs independent of the host's working directory
} satisfies BuildOptions;

/**
 * Every module of the entries' graph that this compiles and the package files they import, or why
 * the graph is left to tsx.
 */
async function graphOf(esbuild: Esbuild, entries: string[]): Promise<{ sources: string[]; externals: string[] } | string> {
  const externals = new Set<string>();
  const result = await esbuild.build({
    ...common,
    entryPoints: entries,
    outdir: '/',
    metafile: true,
    plugins: [
      resolver((_importer, file) => {
        if (compiles(file)) return { path: file, external: false };
        externals.add(file);
        return { path: file, external: true };
      }),
    ],
  });
  const sources: string[] = [];
  for (const [key, input] of Object.entries(result.metafile?.inputs ?? {})) {
    const file = path.resolve('/', key);
    if (!SOURCE.test(file)) return `${file} is not a JavaScript or TypeScript module`;
    if (input.format === 'cjs') return `${file} is CommonJS`;
    const text = fs.readFileSync(file, 'utf8');
    if (UNSAFE.some((re) => re.test(text))) return `${file} uses import.meta.resolve or an import() of a computed specifier`;
    sources.push(file);
  }
  return { sources, externals: [...externals].sort() };
}

/** One source compiled alone, its imports rewritten (see the header). */
async function compileOne(esbuild: Esbuild, source: string, all: Set<string>): Promise<string> {
  const result = await esbuild.build({
    ...common,
    entryPoints: [source],
    outfile: path.join('/', outputName(source)),
    sourcemap: 'inline',
    sourcesContent: false,
    sourceRoot: pathToFileURL(`${path.dirname(source)}${path.sep}`).href, // stack traces name the source
    define: {
      'import.meta.url': JSON.stringify(pathToFileURL(source).href),
      'import.meta.filename': JSON.stringify(source),
      'import.meta.dirname': JSON.stringify(path.dirname(source)),
    },
    plugins: [
      resolver((importer, file) => {
        if (!compiles(file)) return { path: file, external: true };
        if (!all.has(file)) throw new Error(`${file} imported by ${importer} was not in the module graph`);
        return { path: relativeImport(importer, file), external: true };
      }),
    ],
  });
  const js = result.outputFiles?.find((f) => f.path.endsWith('.mjs'));
  if (!js) throw new Error(`no output for ${source}`);
  return js.text;
}

/** Builds of this process by entry list, reused while no source changed. */
const builds = new Map<string, Reusable>();

/** A build and what its reuse depends on: its sources' signatures and its record's stamps. */
interface Reusable extends GraphRecord {
  signatures: Map<string, string>;
}

function stillValid(b: Reusable): boolean {
  return unchanged(b.signatures) && unchanged(Object.entries(b.stamps));
}
/** esbuild compiles run by this process (tests: a recorded graph is not compiled again). */
export const userModuleBuilds = { count: 0 };

function unchanged(signatures: Iterable<[string, string | null]>): boolean {
  for (const [file, sig] of signatures) if (fileSignature(file) !== sig) return false;
  return true;
}

/**
 * What a later host needs to reuse a build without esbuild: the manifest (the sources and their
 * signatures), and the signatures of the package files the outputs import by path and of the
 * sources' directories (a file added beside a source can change what an import resolves to).
 */
interface GraphRecord {
  manifest: string;
  stamps: Record<string, string | null>;
}

function recordPath(cacheDir: string, key: string, version: string): string {
  return path.join(cacheDir, `graph-${crypto.createHash('sha256').update(`${version}\0${key}`).digest('hex').slice(0, 16)}.json`);
}

/** The recorded build for `record`, when nothing it depends on changed since. */
function recorded(record: string): Reusable | null {
  try {
    const r = JSON.parse(fs.readFileSync(record, 'utf8')) as GraphRecord;
    const manifest = JSON.parse(fs.readFileSync(r.manifest, 'utf8')) as UserModulesManifest;
    const modules = Object.entries(manifest.modules);
    if (!modules.every(([, m]) => fs.existsSync(m.out))) return null;
    const reuse = { manifest: r.manifest, signatures: new Map(modules.map(([f, m]) => [f, m.signature])), stamps: r.stamps };
    return stillValid(reuse) ? reuse : null;
  } catch {
    return null; // none yet, or unreadable: compile
  }
}

function writeRecord(record: string, value: GraphRecord): void {
  try {
    const tmp = `${record}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(value));
    fs.renameSync(tmp, record);
  } catch {
    // an unwritable record only costs the next host a compile
  }
}

/**
 * Compiles the graph of `entries` (absolute paths of TypeScript modules) into the cache: the
 * manifest's path, or why it is left to tsx. Never throws.
 */
export async function compileUserModules(entries: string[], cacheDir = USER_MODULES_DIR): Promise<CompileResult> {
  const files = [...new Set(entries.map((e) => path.resolve(e)))].sort();
  if (!files.some(needsTsLoader)) return { reason: 'no TypeScript module' };
  if (process.env[PRECOMPILE_VARIABLE] === '0') return { reason: `${PRECOMPILE_VARIABLE}=0` };
  const key = `${cacheDir}\0${files.join('\0')}`;
  const known = builds.get(key);
  if (known && stillValid(known) && fs.existsSync(known.manifest)) return { manifest: known.manifest };
  try {
    // A build recorded by an earlier host is reused without starting esbuild (host start-up).
    const record = recordPath(cacheDir, key, esbuildVersion());
    const reuse = recorded(record);
    if (reuse) {
      builds.set(key, reuse);
      return { manifest: reuse.manifest };
    }
    userModuleBuilds.count += 1;
    const built = await withEsbuild(async (esbuild) => {
      const found = await graphOf(esbuild, files);
      if (typeof found === 'string') return found;
      const { sources: graph, externals } = found;
      const dirs = [...new Set(graph.map((f) => path.dirname(f)))];
      // Stamped before compiling: a change made meanwhile makes the record stale, not the build.
      const stamps = Object.fromEntries([...externals, ...dirs].map((f) => [f, fileSignature(f)]));
      const signatures = new Map(graph.map((f) => [f, fileSignature(f) ?? '']));
      const all = new Set(graph);
      const outputs = await Promise.all(graph.map(async (f) => ({ name: outputName(f), contents: await compileOne(esbuild, f, all) })));
      return { graph, signatures, stamps, outputs };
    });
    if (typeof built === 'string') return { reason: built };
    const { graph, signatures, stamps, outputs } = built;
    const dir = writeContentAddressed(cacheDir, outputs);
    const manifest: UserModulesManifest = { modules: {} };
    for (const f of graph) manifest.modules[f] = { out: path.join(dir, outputName(f)), signature: signatures.get(f)! };
    // Beside the outputs, named by its own content (it carries the signatures, which the outputs' hash does not).
    const text = JSON.stringify(manifest);
    const manifestPath = path.join(dir, `manifest-${crypto.createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`);
    if (!fs.existsSync(manifestPath)) {
      const tmp = `${manifestPath}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, manifestPath);
    }
    if (!unchanged(signatures)) return { reason: 'a module changed while it was compiled' };
    builds.set(key, { manifest: manifestPath, signatures, stamps });
    writeRecord(record, { manifest: manifestPath, stamps });
    return { manifest: manifestPath };
  } catch (error) {
    const errors = (error as { errors?: { text: string }[] }).errors;
    return { reason: errors?.[0]?.text ?? ((error as Error).message.split('\n')[0] || 'unknown error') };
  }
}
