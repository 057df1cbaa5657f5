// Compiles the test files for scripts/run-tests.mjs: one esbuild build of every test file (shared
// chunks, packages external, source maps) into var/cache/tests/<key>/, where the key covers every
// module under src/, test/, chaos/, bench/ and bin/ (path, size, mtime) and esbuild's version, so a
// file runs the code on disk. Each module keeps its own import.meta.url, .dirname and .filename
// (replaced in its syntax tree, not in its strings), so fixtures are found from their sources. A
// bundled test process has no TypeScript loader: src/child/ts-loader.ts registers tsx when a test
// imports a TypeScript module by path (__APSUP_COMPILED__). Returns the directory, or null (with
// the reason printed) to run the sources through tsx.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundleOptions, prune, resolveEsbuildPackage } from '../bin/cli-cache.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** Every directory whose modules a test file can import (the key of a bundle covers them all). */
const KEYED_DIRS = ['src', 'test', 'chaos', 'bench', 'bin'];
/** The files esbuild can take into a bundle: a note or a SQL fixture beside them changes nothing. */
const BUNDLED = /\.(?:[cm]?[jt]s|json)$/;

function walk(dir, out = []) {
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) walk(full, out);
    else out.push(full);
  }
  return out;
}

/** `files`: every test file, relative to the repository root. */
export async function bundleTests(files) {
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)(path.dirname(resolveEsbuildPackage()));
  } catch (error) {
    console.log(`tests run through tsx: no esbuild (${error.message.split('\n')[0]})`);
    return null;
  }
  const options = bundleOptions(root);
  const hash = crypto.createHash('sha256').update(`${esbuild.version}\0${files.join('\0')}\0${options.external.join(',')}\0`);
  for (const file of KEYED_DIRS.flatMap((d) => walk(path.join(root, d)).filter((f) => BUNDLED.test(f))).sort()) {
    const s = fs.statSync(file);
    hash.update(`${path.relative(root, file)}\0${s.size}:${s.mtimeMs}\0`);
  }
  const cache = path.join(root, 'var', 'cache', 'tests');
  const dir = path.join(cache, hash.digest('hex').slice(0, 16));
  if (fs.existsSync(path.join(dir, 'complete'))) return dir;
  const meta = {
    name: 'apsup-import-meta',
    setup(build) {
      build.onLoad({ filter: /\.(?:m?ts|m?js)$/ }, async (args) => {
        if (args.path.split(path.sep).includes('node_modules')) return undefined;
        const source = await fs.promises.readFile(args.path, 'utf8');
        const ts = /\.m?ts$/.test(args.path);
        const out = await esbuild.transform(source, {
          loader: ts ? 'ts' : 'js',
          format: 'esm',
          target: 'node20',
          sourcefile: args.path,
          sourcemap: 'inline',
          define: {
            'import.meta.url': JSON.stringify(pathToFileURL(args.path).href),
            'import.meta.dirname': JSON.stringify(path.dirname(args.path)),
            'import.meta.filename': JSON.stringify(args.path),
          },
        });
        return { contents: out.code, loader: 'js', resolveDir: path.dirname(args.path) };
      });
    },
  };
  const tmp = `${dir}.${process.pid}.tmp`;
  try {
    await esbuild.build({
      ...options,
      absWorkingDir: root,
      entryPoints: files.map((f) => ({ in: f, out: f.replace(/\.ts$/, '') })),
      outdir: tmp,
      sourcemap: 'linked',
      define: { __APSUP_COMPILED__: 'true' },
      plugins: [meta],
    });
    fs.writeFileSync(path.join(tmp, 'complete'), '');
    fs.renameSync(tmp, dir);
    prune(cache, path.basename(dir));
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (fs.existsSync(path.join(dir, 'complete'))) return dir; // a concurrent run built it
    console.log(`tests run through tsx: compiling them failed (${(error.errors?.[0]?.text ?? error.message).split('\n')[0]})`);
    return null;
  } finally {
    await esbuild.stop?.();
  }
  return dir;
}
