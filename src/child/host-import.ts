/**
 * How a precompiled host (the CLI from its compiled copy) imports its own TypeScript user modules
 * (the families module, the tasks module and, for failure hooks, its handlers): the JavaScript of
 * their graph compiled as for its children (user-modules.ts; an earlier host's compile is reused
 * without starting esbuild), so the host registers tsx only for a graph that cannot be compiled.
 * So does a compiled test process (scripts/test-bundle.mjs). A host running from source (tsx
 * already registered, APSUP_CHILD_PRECOMPILE=0) imports the sources as before.
 */
import path from 'node:path';
import { loadTaskRegistry } from '../tasks/load.ts';
import type { TaskRegistry } from '../tasks/registry.ts';
import { PRECOMPILE_VARIABLE } from './entry.ts';
import { compiledOutput, importUserModule, needsTsLoader, runsCompiled, useCompiledModules } from './ts-loader.ts';
import { compileUserModules } from './user-modules.ts';

function hostCompiles(): boolean {
  return runsCompiled() && process.env[PRECOMPILE_VARIABLE] !== '0';
}

/** A manifest compiled for this host's children serves its own imports too (a precompiled host). */
export function useForHost(manifest: string): void {
  if (hostCompiles()) useCompiledModules(manifest);
}

/** Compiles `files` for this process's own imports when it runs precompiled; never throws. */
async function compileForHost(files: string[]): Promise<void> {
  if (!hostCompiles() || !files.some((f) => needsTsLoader(f) && compiledOutput(f) === null)) return;
  const r = await compileUserModules(files);
  if ('manifest' in r) useCompiledModules(r.manifest);
}

/** importUserModule, from the compiled graph of `file` where this host can have one. */
export async function importHostModule(file: string, query = ''): Promise<Record<string, unknown>> {
  await compileForHost([file]);
  return importUserModule(file, query);
}

/**
 * loadTaskRegistry for a host: the tasks module, and each handler module it imports later (a
 * failure hook run by `tasks cancel`, say), from their compiled graphs where it can.
 */
export async function loadHostTaskRegistry(modulePath: string): Promise<TaskRegistry> {
  await compileForHost([path.resolve(modulePath)]);
  return loadTaskRegistry(modulePath, { importModule: importHostModule });
}
