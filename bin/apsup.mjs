#!/usr/bin/env node
// Runs the TypeScript CLI through tsx (no build step). Both tsx hooks are registered: a families
// or tasks module of a CommonJS project (a default `npm init -y`, no "type": "module") is a CJS
// .ts file, which Node would otherwise hand back to the ESM loader that is importing it
// ("Cannot require() ES Module ... in a cycle"); with the CJS hook tsx compiles it as CJS.
import { register as registerCjs } from 'tsx/cjs/api';
import { register } from 'tsx/esm/api';
register();
registerCjs();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
