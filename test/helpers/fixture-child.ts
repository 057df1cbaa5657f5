/**
 * The node arguments that start a test fixture child (a TypeScript entry under test/): compiled
 * once per test process into plain JavaScript with the runtime's own child compiler
 * (src/child/entry.ts), so each child starts without tsx's hooks and compilation (about a second
 * of CPU each, and the contract and cap tests start dozens). Falls back to tsx when compiling is
 * not possible, as the runtime's children do; APSUP_CHILD_PRECOMPILE=0 forces the fallback.
 */
import path from 'node:path';
import { compileEntries, PRECOMPILE_VARIABLE, PRECOMPILED_VARIABLE } from '../../src/child/entry.ts';
import { PACKAGE_ROOT } from '../../src/paths.ts';

const CACHE = path.join(PACKAGE_ROOT, 'var', 'cache', 'test-child');
const known = new Map<string, FixtureChild>();

export interface FixtureChild {
  /** The node arguments before the child's own. */
  args: string[];
  /** To merge into the child's environment: a compiled child registers the TypeScript loader for the user modules it imports (src/child/ts-loader.ts). */
  env: Record<string, string>;
}

/** `source`: the entry, relative to the repository root or absolute. */
export function fixtureChild(source: string): FixtureChild {
  const file = path.resolve(PACKAGE_ROOT, source);
  let child = known.get(file);
  if (!child) {
    const name = path.basename(file, '.ts');
    const compiled = process.env[PRECOMPILE_VARIABLE] === '0' ? null : compileEntries({ [name]: file }, CACHE);
    child =
      compiled && 'dir' in compiled
        ? { args: [path.join(compiled.dir, `${name}.mjs`)], env: { [PRECOMPILED_VARIABLE]: '1' } }
        : { args: ['--import', 'tsx', file], env: { [PRECOMPILED_VARIABLE]: '0' } };
    known.set(file, child);
  }
  return child;
}
