#!/usr/bin/env node
// Runs the TypeScript CLI through tsx in this process (no build step, no child process: a signal
// sent to this process reaches the runtime itself).
import { register } from 'tsx/esm/api';
register();
const { cli } = await import('../src/cli/main.ts');
process.exitCode = await cli(process.argv.slice(2));
