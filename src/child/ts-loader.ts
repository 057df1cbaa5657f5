/**
 * Imports a user module (handler, processor, tasks module) in a child. A precompiled child
 * (entry.ts) has no TypeScript loader; it registers tsx once, on the first user module that is
 * not plain JavaScript, so a child running JavaScript modules never pays for it.
 */
import { pathToFileURL } from 'node:url';

/** Set by the host when the child's user modules are TypeScript: register the loader before 'ready'. */
export const PRELOAD_TS_VARIABLE = 'APSUP_CHILD_PRELOAD_TS';

let registered: Promise<void> | null = null;

export function needsTsLoader(file: string): boolean {
  return !/\.(?:mjs|cjs|js|json)$/i.test(file.split('?')[0] ?? file);
}

/**
 * Registers tsx's hooks in this process if it runs precompiled and does not have them yet: ESM,
 * and CJS for a CommonJS project's .ts modules (a default `npm init -y`, as bin/apsup.mjs does).
 */
export function ensureTsLoader(): Promise<void> {
  if (process.env.APSUP_CHILD_PRECOMPILED !== '1') return Promise.resolve();
  registered ??= Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]).then(([esm, cjs]) => {
    esm.register();
    cjs.register();
  });
  return registered;
}

/** import() of a file path, with an optional query (a fresh module instance per query). */
export async function importUserModule(file: string, query = ''): Promise<Record<string, unknown>> {
  if (needsTsLoader(file)) await ensureTsLoader();
  const mod = (await import(pathToFileURL(file).href + query)) as Record<string, unknown>;
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
