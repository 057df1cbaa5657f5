/**
 * esbuild for the host's compiles (child entries, user modules): found as a dependency of tsx
 * (hoisted or not), and its service process stopped once no compile is in flight, so a host does
 * not keep an idle esbuild process beside it for its whole life (the next compile starts one).
 */
import fs from 'node:fs';
import path from 'node:path';
import { resolveEsbuildPackage } from '../../bin/cli-cache.mjs';
import { requirePackage } from '../paths.ts';

export type Esbuild = typeof import('esbuild');

/** esbuild's package.json, by the CLI compile's own rule, resolved from the package. */
const esbuildPackageJson = (): string => resolveEsbuildPackage(requirePackage);

export function loadEsbuild(): Esbuild {
  return requirePackage(path.dirname(esbuildPackageJson())) as Esbuild;
}

/** esbuild's version without loading it (a cache key). */
export function esbuildVersion(): string {
  return (JSON.parse(fs.readFileSync(esbuildPackageJson(), 'utf8')) as { version: string }).version;
}

let inFlight = 0;
/**
 * A synchronous compile ran in this process: its service lives in a worker thread, and stopping it
 * leaves its esbuild process a zombie nobody reaps; from then on nothing is stopped (the host
 * builds synchronously only when src/ changed, entry.ts).
 */
let syncUsed = false;

/** A synchronous compile (buildSync). */
export function withEsbuildSync<T>(compile: (esbuild: Esbuild) => T): T {
  syncUsed = true;
  return compile(loadEsbuild());
}

/** An asynchronous compile; esbuild's service is stopped once no other one is in flight. */
export async function withEsbuild<T>(compile: (esbuild: Esbuild) => Promise<T>): Promise<T> {
  const esbuild = loadEsbuild();
  inFlight += 1;
  try {
    return await compile(esbuild);
  } finally {
    inFlight -= 1;
    if (inFlight === 0 && !syncUsed) void esbuild.stop();
  }
}
