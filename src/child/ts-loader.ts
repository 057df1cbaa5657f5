/**
 * Imports a user module (handler, processor, tasks module) in a child or a host. A precompiled child
 * (entry.ts) has no TypeScript loader: it imports the JavaScript the host compiled for the module
 * (user-modules.ts) while the module's source is the one compiled, else it registers tsx once, on
 * the first user module that is not plain JavaScript, so a child running JavaScript never pays for it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fileSignature } from './file-signature.ts';

/** Set by the host when the child's user modules are TypeScript: register the loader before 'ready'. */
export const PRELOAD_TS_VARIABLE = 'APSUP_CHILD_PRELOAD_TS';

/** Set by the host: the manifest of the user modules it compiled (user-modules.ts). */
export const USER_MODULES_VARIABLE = 'APSUP_CHILD_USER_MODULES';

/** Defined by the test bundler (scripts/test-bundle.mjs): this code runs compiled, without a loader. */
declare const __APSUP_COMPILED__: boolean | undefined;
const BUNDLED = typeof __APSUP_COMPILED__ !== 'undefined';

let registered: Promise<void> | null = null;
/** Source -> compiled output of the host's manifest; null: none, or a source changed since. */
let compiled: Map<string, { out: string; signature: string }> | null | undefined;

function readManifest(file: string | undefined): Map<string, { out: string; signature: string }> | null {
  if (!file) return null;
  try {
    const { modules } = JSON.parse(fs.readFileSync(file, 'utf8')) as { modules: Record<string, { out: string; signature: string }> };
    const map = new Map(Object.entries(modules));
    // An output imports the others: one changed source makes them all suspect.
    for (const [source, m] of map) if (fileSignature(source) !== m.signature) return null;
    process.setSourceMapsEnabled(true); // stack traces name the TypeScript sources, as under tsx
    return map;
  } catch {
    return null;
  }
}

/**
 * Adds the outputs of a manifest this process compiled (a host importing its own user modules,
 * host-import.ts); a manifest whose sources changed since adds nothing.
 */
export function useCompiledModules(manifest: string): void {
  if (compiled === undefined) compiled = readManifest(process.env[USER_MODULES_VARIABLE]);
  const more = readManifest(manifest);
  if (more) compiled = new Map([...(compiled ?? []), ...more]);
}

/** The compiled output of a user module, while its source is the one the host compiled. */
export function compiledOutput(file: string): string | null {
  if (compiled === undefined) compiled = readManifest(process.env[USER_MODULES_VARIABLE]);
  const source = path.resolve(file);
  const m = compiled?.get(source);
  return m && fileSignature(source) === m.signature ? m.out : null;
}

export function needsTsLoader(file: string): boolean {
  return !/\.(?:mjs|cjs|js|json)$/i.test(file.split('?')[0] ?? file);
}

/** Whether this process runs compiled JavaScript without a TypeScript loader (a child entry, the CLI, a compiled test). */
export function runsCompiled(): boolean {
  return process.env.APSUP_CHILD_PRECOMPILED === '1' || BUNDLED;
}

/**
 * Registers tsx's hooks in this process if it runs precompiled (a child entry, the CLI, a compiled
 * test) and does not have them yet: ESM,
 * and CJS for a CommonJS project's .ts modules (a default `npm init -y`, as bin/apsup.mjs does).
 */
export function ensureTsLoader(): Promise<void> {
  if (!runsCompiled()) return Promise.resolve();
  registered ??= Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]).then(([esm, cjs]) => {
    esm.register();
    cjs.register();
  });
  return registered;
}

/** Whether this process registered tsx (a child that imports only compiled or JavaScript modules does not). */
export function tsLoaderRegistered(): boolean {
  return registered !== null;
}

/** import() of a file path, with an optional query (a fresh module instance per query). */
export async function importUserModule(file: string, query = ''): Promise<Record<string, unknown>> {
  const out = compiledOutput(file);
  if (!out && needsTsLoader(file)) await ensureTsLoader();
  const mod = (await import(pathToFileURL(out ?? file).href + query)) as Record<string, unknown>;
  // A CommonJS project's .ts module compiled from `export default`: import() sees its exports as
  // `default`; the module's own exports are what the caller looks for.
  const inner = mod.default as Record<string, unknown> | undefined;
  return inner && typeof inner === 'object' && inner.__esModule === true ? inner : mod;
}

/**
 * instanceof that also holds for an instance of another copy of the same class: user modules
 * import the SDK from source while a precompiled child has its own bundled copy.
 */
export function isInstanceOf(value: unknown, ctor: abstract new (...args: never[]) => unknown): boolean {
  if (value instanceof ctor) return true;
  if (typeof value !== 'object' || value === null) return false;
  for (let p = Object.getPrototypeOf(value) as object | null; p; p = Object.getPrototypeOf(p) as object | null) {
    if ((p as { constructor?: { name?: string } }).constructor?.name === ctor.name && p !== Object.prototype) return true;
  }
  return false;
}
