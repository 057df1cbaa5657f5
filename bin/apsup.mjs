#!/usr/bin/env node
// Runs the CLI in this process (no child process: a signal sent to this process reaches the
// runtime itself). Normally from its compiled copy (cli-cache.mjs) with no TypeScript loader: the
// loader is registered only when a user TypeScript module is imported (src/child/ts-loader.ts).
// Otherwise from source through tsx, with both hooks: a families or tasks module of a CommonJS
// project (a default `npm init -y`) is a CJS .ts file, which Node would otherwise hand back to the
// ESM loader that is importing it ("Cannot require() ES Module ... in a cycle").
import { pathToFileURL } from 'node:url';
import { cliBundle } from './cli-cache.mjs';

const bundle = cliBundle();
let cli;
if (bundle) {
  process.env.APSUP_CHILD_PRECOMPILED = '1';
  ({ cli } = await import(pathToFileURL(bundle).href));
} else {
  const { register: registerCjs } = await import('tsx/cjs/api');
  const { register } = await import('tsx/esm/api');
  register();
  registerCjs();
  ({ cli } = await import('../src/cli/main.ts'));
}
process.exitCode = await cli(process.argv.slice(2));
