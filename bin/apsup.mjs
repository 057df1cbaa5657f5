#!/usr/bin/env node
// Runs the TypeScript CLI through tsx in this process (no build step, no child process: a signal
// sent to this process reaches the runtime itself). Both tsx hooks are registered: a families or
// tasks module of a CommonJS project (a default `npm init -y`) is a CJS .ts file, which Node would
// otherwise hand back to the ESM loader that is importing it ("Cannot require() ES Module ... in a cycle").
import { register as registerCjs } from 'tsx/cjs/api';
import { register } from 'tsx/esm/api';
register();
registerCjs();
const { cli } = await import('../src/cli/main.ts');
process.exitCode = await cli(process.argv.slice(2));
